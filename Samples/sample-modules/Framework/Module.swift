import NodesDebug

/// Something that happened in a module, which listeners may react to.
protocol ModuleEvent {}

/// The initial conditions that made a module be built, such as the product to show, and which
/// routing flow asked for it.
protocol BuildContext {
    var routingFlow: String { get }
}

/// The base of modules: a module is the entry point of a feature, where its parts are wired,
/// and an events producer: it exposes the events that can happen in it, through ``events``.
///
/// A module is kept alive by the module manager for as long as its view controller lives; the
/// module itself holds that view controller only weakly.
class Module {
    /// The module's events descriptor: every event of the module, for its listeners.
    let events = EventStream()
    private(set) weak var rootViewController: ViewController?

    /// The module's name in the tree: its type name.
    var name: String { "\(type(of: self))" }

    /// Builds the module's root view controller and wires it to the module's events.
    final func prepareRootViewController() -> ViewController {
        let viewController = makeRootViewController()
        rootViewController = viewController
        return viewController
    }

    /// Makes the root view controller. Subclasses override it.
    func makeRootViewController() -> ViewController {
        preconditionFailure("\(type(of: self)) must override makeRootViewController()")
    }
}

/// A headless view controller, so that the sample runs without UIKit.
///
/// It adopts `TrackedObject`, so it reports its own release from `deinit`: the tree then shows
/// a view gone at once, even while the manager still holds its module. (Objects that do not
/// adopt it are watched through weak references, checked once their node is detached.)
class ViewController: TrackedObject {
    let title: String
    var trackingHandle: TrackingHandle?

    init(title: String) { self.title = title }

    deinit { trackingHandle?.reportRelease() }
}

/// A headless navigation stack: the only owner of the view controllers on it, as UIKit is.
final class NavigationController {
    private(set) var viewControllers: [ViewController] = []

    var topViewController: ViewController? { viewControllers.last }

    func push(_ viewController: ViewController) { viewControllers.append(viewController) }
    func pop() { _ = viewControllers.popLast() }
    func removeAll() { viewControllers.removeAll() }

    func top<T: ViewController>(_ type: T.Type) -> T? { viewControllers.last as? T }
}
