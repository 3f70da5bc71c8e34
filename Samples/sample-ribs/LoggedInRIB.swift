// The LoggedIn RIB: viewless. It owns the rider's profile stream and switches its one child
// between Request and OnTrip, presenting their views on the Root's view controller.

protocol LoggedInRouting: AnyObject {
    func routeToRequest()
    func routeToOnTrip(destination: String)
}

final class LoggedInInteractor: Interactor, RequestListener, OnTripListener {
    weak var router: LoggedInRouting?
    private let profileStream: ReplayStream<RiderProfile>

    init(profileStream: ReplayStream<RiderProfile>) {
        self.profileStream = profileStream
    }

    func rideRequested(to destination: String) {
        router?.routeToOnTrip(destination: destination)
    }

    func tripEnded(rating: Double) {
        // Only LoggedIn writes to the profile stream; its children read it.
        var profile = profileStream.value
        profile.rating = rating
        profileStream.onNext(profile)
        router?.routeToRequest()
    }
}

final class LoggedInRouter: Router<LoggedInInteractor>, LoggedInRouting {
    private let viewController: ViewController
    private let requestBuilder: RequestBuilder
    private let onTripBuilder: OnTripBuilder
    private var current: (router: Routing, view: ViewController)?

    init(
        interactor: LoggedInInteractor, viewController: ViewController,
        requestBuilder: RequestBuilder, onTripBuilder: OnTripBuilder
    ) {
        self.viewController = viewController
        self.requestBuilder = requestBuilder
        self.onTripBuilder = onTripBuilder
        super.init(interactor: interactor)
    }

    override func didLoad() {
        routeToRequest()
    }

    func routeToRequest() {
        let request = requestBuilder.build(withListener: interactor)
        show(request, view: request.viewController)
    }

    func routeToOnTrip(destination: String) {
        let onTrip = onTripBuilder.build(withListener: interactor, destination: destination)
        show(onTrip, view: onTrip.viewController)
    }

    /// Replaces the current child: detach the old one and dismiss its view, attach the new one
    /// and present its view. A viewless RIB must clean up its children's views itself.
    private func show(_ router: Routing, view: ViewController) {
        if let current {
            detachChild(current.router)
            viewController.dismiss(current.view)
        }
        attachChild(router)
        viewController.present(view)
        current = (router, view)
    }
}

/// The LoggedIn scope's dependencies: the stream its children read.
final class LoggedInComponent {
    let profileStream: ReplayStream<RiderProfile>
    let injectsLeak: Bool

    init(app: AppComponent, userName: String) {
        profileStream = ReplayStream(RiderProfile(name: userName, rating: 5))
        injectsLeak = app.injectsLeak
    }
}

final class LoggedInBuilder {
    private let app: AppComponent
    private let rootViewController: ViewController

    init(app: AppComponent, rootViewController: ViewController) {
        self.app = app
        self.rootViewController = rootViewController
    }

    func build(userName: String) -> LoggedInRouter {
        let component = LoggedInComponent(app: app, userName: userName)
        let interactor = LoggedInInteractor(profileStream: component.profileStream)
        let router = LoggedInRouter(
            interactor: interactor, viewController: rootViewController,
            requestBuilder: RequestBuilder(component: component), onTripBuilder: OnTripBuilder(component: component))
        interactor.router = router
        return router
    }
}
