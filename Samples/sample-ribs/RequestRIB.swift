// The Request RIB: greets the rider (from the profile stream) and requests a ride.

protocol RequestListener: AnyObject {
    func rideRequested(to destination: String)
}

protocol RequestPresentableListener: AnyObject {
    func requestRide(to destination: String)
}

final class RequestViewController: ViewController {
    weak var listener: RequestPresentableListener?
    private(set) var greeting = ""

    func show(greeting: String) {
        self.greeting = greeting
    }

    /// The rider taps "Request a ride".
    func tapRequestRide(to destination: String) {
        listener?.requestRide(to: destination)
    }
}

final class RequestInteractor: Interactor, RequestPresentableListener {
    weak var listener: RequestListener?
    private let presenter: RequestViewController
    private let profileStream: ReplayStream<RiderProfile>
    private let injectsLeak: Bool
    private(set) var riderName = ""

    init(presenter: RequestViewController, profileStream: ReplayStream<RiderProfile>, injectsLeak: Bool) {
        self.presenter = presenter
        self.profileStream = profileStream
        self.injectsLeak = injectsLeak
    }

    override func didBecomeActive() {
        // The stream keeps this closure until the subscription is disposed, and the closure
        // keeps `self`: fine while the RIB is attached, a leak if it outlives the RIB.
        let subscription = profileStream.subscribe { profile in
            self.riderName = profile.name
            self.presenter.show(greeting: "Where to, \(profile.name)? (rated \(profile.rating))")
        }
        if injectsLeak {
            // LEAK (--leak retain-cycle): the subscription is never disposed, so the LoggedIn
            // scope's stream keeps this interactor, and its view, after the RIB is detached.
            _ = subscription
        } else {
            subscription.disposeOnDeactivate(interactor: self)
        }
    }

    func requestRide(to destination: String) {
        listener?.rideRequested(to: destination)
    }
}

final class RequestRouter: ViewableRouter<RequestInteractor, RequestViewController> {}

final class RequestBuilder {
    private let component: LoggedInComponent

    init(component: LoggedInComponent) {
        self.component = component
    }

    func build(withListener listener: RequestListener) -> RequestRouter {
        let viewController = RequestViewController(title: "Request")
        let interactor = RequestInteractor(
            presenter: viewController, profileStream: component.profileStream, injectsLeak: component.injectsLeak)
        interactor.listener = listener
        viewController.listener = interactor
        return RequestRouter(interactor: interactor, viewController: viewController)
    }
}
