/// One thing a headless view did, in the order it happened.
public enum PresentationRecord: Equatable, Sendable, CustomStringConvertible {
    /// Presented a view (by title) with a style.
    case presented(String, ModalStyle)
    /// Dismissed a view.
    case dismissed(String)
    /// Embedded a child.
    case contained(String)
    /// Removed a child.
    case uncontained(String)
    /// Pushed on a navigation stack.
    case pushed(String)
    /// Popped from a navigation stack.
    case popped(String)
    /// Replaced the children of a container.
    case set([String])
    /// Selected a tab.
    case selected(Int)

    /// A short line such as `presented Login (cover)`.
    public var description: String {
        switch self {
        case .presented(let title, let style): "presented \(title) (\(style))"
        case .dismissed(let title): "dismissed \(title)"
        case .contained(let title): "contained \(title)"
        case .uncontained(let title): "uncontained \(title)"
        case .pushed(let title): "pushed \(title)"
        case .popped(let title): "popped \(title)"
        case .set(let titles): "set [\(titles.joined(separator: ", "))]"
        case .selected(let index): "selected tab \(index)"
        }
    }
}

/// An in-memory view: it keeps what it presents and contains, and records every presentation,
/// so that flows can "show" screens in samples and tests without UIKit.
open class HeadlessViewController: TrackedObjectBase, PresentingViewControllable {
    /// How the view reads in records and trees.
    public final var title: String
    /// The view presented over this one, if any (kept strongly, as UIKit does).
    public final private(set) var presentedViewController: ViewControllable?
    /// The view that presented this one (weak, as UIKit does).
    public final private(set) weak var presentingViewController: HeadlessViewController?
    /// Embedded child views.
    public final private(set) var children: [ViewControllable] = []
    /// Everything this view did, in order.
    public final private(set) var history: [PresentationRecord] = []
    /// A view with a title.
    public init(title: String) {
        self.title = title
    }

    /// Presents over this view; the view replaces any previous presented view.
    open func present(_ viewController: ViewControllable, withModalStyle modalStyle: ModalStyle, animated: Bool) {
        presentedViewController = viewController
        (viewController as? HeadlessViewController)?.presentingViewController = self
        record(.presented(Self.title(of: viewController), modalStyle))
    }

    /// Dismisses the presented view if it is `viewController`.
    open func dismiss(_ viewController: ViewControllable, animated: Bool) {
        guard presentedViewController === viewController else { return }
        presentedViewController = nil
        (viewController as? HeadlessViewController)?.presentingViewController = nil
        record(.dismissed(Self.title(of: viewController)))
    }

    /// Embeds a child view.
    open func contain(_ viewController: ViewControllable) {
        guard !children.contains(where: { $0 === viewController }) else { return }
        children.append(viewController)
        record(.contained(Self.title(of: viewController)))
    }

    /// Removes an embedded child view.
    open func uncontain(_ viewController: ViewControllable) {
        guard let index = children.firstIndex(where: { $0 === viewController }) else { return }
        children.remove(at: index)
        record(.uncontained(Self.title(of: viewController)))
    }

    /// Appends to ``history``; subclasses record their own actions through it.
    public final func record(_ entry: PresentationRecord) {
        history.append(entry)
    }

    /// Replaces the embedded children (containers use it).
    public final func replaceChildren(_ viewControllers: [ViewControllable]) {
        children = viewControllers
    }

    /// The title of a headless view, or the type name of any other view.
    public static func title(of viewController: ViewControllable) -> String {
        (viewController as? HeadlessViewController)?.title ?? String(describing: type(of: viewController))
    }

    /// What is on screen from this view: the chain of presented views, top last.
    public final var presentationChain: [String] {
        var chain = [title]
        var current = presentedViewController
        while let view = current {
            chain.append(Self.title(of: view))
            current = (view as? HeadlessViewController)?.presentedViewController
        }
        return chain
    }
}

/// An in-memory navigation stack.
open class HeadlessNavigationController: HeadlessViewController, NavigationControllable {
    /// The stack, bottom first.
    public final var viewControllers: [ViewControllable] { children }

    /// A stack with an optional root view.
    public init(title: String = "Navigation", root: ViewControllable? = nil) {
        super.init(title: title)
        if let root { replaceChildren([root]) }
    }

    /// Pushes a view.
    open func push(_ viewController: ViewControllable, animated: Bool) {
        replaceChildren(children + [viewController])
        record(.pushed(Self.title(of: viewController)))
    }

    /// Pops `viewController` and everything above it.
    open func pop(_ viewController: ViewControllable, animated: Bool) {
        guard let index = children.firstIndex(where: { $0 === viewController }) else { return }
        replaceChildren(Array(children[..<index]))
        record(.popped(Self.title(of: viewController)))
    }

    /// Replaces the stack.
    open func setViewControllers(_ viewControllers: [ViewControllable], animated: Bool) {
        replaceChildren(viewControllers)
        record(.set(viewControllers.map(Self.title(of:))))
    }
}

/// The navigation controller of the seed's "UIKit additions", headless on Linux.
public typealias NavigationController = HeadlessNavigationController

/// An in-memory tab container.
open class HeadlessTabBarController: HeadlessViewController, TabBarControllable {
    /// The tabs.
    public final var viewControllers: [ViewControllable] { children }
    /// The selected tab; setting it records the selection.
    public final var selectedIndex: Int = 0 {
        didSet { record(.selected(selectedIndex)) }
    }

    /// A tab container with no tabs.
    public override init(title: String = "Tabs") {
        super.init(title: title)
    }

    /// Replaces the tabs.
    open func setViewControllers(_ viewControllers: [ViewControllable], animated: Bool) {
        replaceChildren(viewControllers)
        record(.set(viewControllers.map(Self.title(of:))))
    }
}

/// An in-memory window: it shows a root view and retains the root flow.
@MainActor
public final class HeadlessWindow: WindowViewControllable {
    /// The view the window shows.
    public var rootViewController: ViewControllable?
    /// The retained root flow.
    public var flow: Flow?
    /// Whether `makeKeyAndVisible` was called.
    public private(set) var isVisible = false

    /// An empty window.
    public init() {}

    /// Makes the window visible.
    public func makeKeyAndVisible() {
        isVisible = true
    }

    /// Shows the root flow's view, retains the flow and starts it: how an app launches. The root
    /// node's attach site is the caller's.
    public func launch(_ rootFlow: Flow, file: StaticString = #filePath, line: UInt = #line) {
        rootViewController = (rootFlow as? ViewControllableFlow)?.getViewController()
        makeKeyAndVisible()
        flow = rootFlow
        (rootFlow as? NodeRegistering)?.registerRoot(at: AttachSite(file: file, line: line))
        rootFlow.start()
    }

    /// Ends the root flow and lets go of it and of its view: how an app shuts down cleanly.
    public func close() {
        flow?.end()
        flow = nil
        rootViewController = nil
        isVisible = false
    }
}

/// An in-memory scene of windows.
public final class HeadlessWindowScene: WindowSceneViewControllable {
    /// The scene's windows.
    public private(set) var windows: [WindowViewControllable] = []

    /// An empty scene.
    public init() {}

    /// Adds a window.
    public func add(_ window: WindowViewControllable) {
        windows.append(window)
    }
}
