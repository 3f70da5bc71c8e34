/// A headless view controller, so that the sample runs without UIKit. A VIPER view is passive:
/// it forwards taps to its presenter and shows what the presenter gives it.
class ViewController {
    let title: String

    init(title: String) {
        self.title = title
    }
}

/// A headless navigation stack: it keeps the views on it, as UIKit does, and nothing else does.
final class NavigationController {
    private(set) var viewControllers: [ViewController] = []

    func setRoot(_ viewController: ViewController) {
        viewControllers = [viewController]
    }

    func push(_ viewController: ViewController) {
        viewControllers.append(viewController)
    }

    /// Takes `viewController` (and anything above it) off the stack.
    func remove(_ viewController: ViewController) {
        guard let index = viewControllers.firstIndex(where: { $0 === viewController }) else { return }
        viewControllers.removeSubrange(index...)
    }

    /// The view on top of the stack, if it is a `T`.
    func top<T: ViewController>(_ type: T.Type) -> T? {
        viewControllers.last as? T
    }
}
