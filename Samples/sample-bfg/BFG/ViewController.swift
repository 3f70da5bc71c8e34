/// A headless view controller, so that the sample runs without UIKit.
class ViewController {
    let title: String
    private(set) var presented: ViewController?

    init(title: String) {
        self.title = title
    }

    func present(_ viewController: ViewController) { presented = viewController }
    func dismiss() { presented = nil }
}

/// A headless navigation stack: it keeps the views on it, as UIKit does.
final class NavigationController: ViewController {
    private(set) var viewControllers: [ViewController] = []

    init() { super.init(title: "Navigation") }

    func setRoot(_ viewController: ViewController) { viewControllers = [viewController] }
    func push(_ viewController: ViewController) { viewControllers.append(viewController) }
    func pop() { _ = viewControllers.popLast() }

    /// The view on top, if it is a `T`: the presented one first, then the top of the stack.
    func top<T: ViewController>(_ type: T.Type) -> T? {
        (viewControllers.last?.presented as? T) ?? (viewControllers.last as? T)
    }
}
