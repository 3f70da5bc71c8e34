// The OnTrip RIB: the ride in progress, with a map; ending the trip tells the listener.

protocol OnTripListener: AnyObject {
    func tripEnded(rating: Double)
}

protocol OnTripPresentableListener: AnyObject {
    func endTrip(rating: Double)
}

final class OnTripViewController: ViewController {
    weak var listener: OnTripPresentableListener?

    /// The rider rates the trip at its end.
    func tapRate(_ rating: Double) {
        listener?.endTrip(rating: rating)
    }
}

final class OnTripInteractor: Interactor, OnTripPresentableListener {
    weak var listener: OnTripListener?
    let destination: String

    init(destination: String) {
        self.destination = destination
    }

    func endTrip(rating: Double) {
        listener?.tripEnded(rating: rating)
    }
}

final class OnTripRouter: ViewableRouter<OnTripInteractor, OnTripViewController> {}

final class OnTripBuilder {
    private let component: LoggedInComponent

    init(component: LoggedInComponent) {
        self.component = component
    }

    func build(withListener listener: OnTripListener, destination: String) -> OnTripRouter {
        let viewController = OnTripViewController(title: "On trip to \(destination)")
        let interactor = OnTripInteractor(destination: destination)
        interactor.listener = listener
        viewController.listener = interactor
        return OnTripRouter(interactor: interactor, viewController: viewController)
    }
}
