/// How a presented view covers its presenter.
public struct ModalStyle: Hashable, Sendable, CustomStringConvertible {
    /// The presentation kinds a headless view records.
    public enum Behavior: String, Sendable {
        /// Covers the whole screen.
        case cover
        /// A page sheet over the presenter.
        case sheet
        /// A custom presentation.
        case custom
    }

    /// The kind of presentation.
    public let behavior: Behavior

    /// A style of the given kind.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }

    /// Full screen.
    public static let cover = ModalStyle(behavior: .cover)
    /// A sheet.
    public static let sheet = ModalStyle(behavior: .sheet)
    /// A custom presentation.
    public static let custom = ModalStyle(behavior: .custom)

    /// The kind's name.
    public var description: String { behavior.rawValue }
}

/// A node's view, as its flow sees it. Like the Nodes framework's outside UIKit, it asks
/// nothing: any class can be a node's view.
@preconcurrency @MainActor
public protocol ViewControllable: AnyObject {}

/// A view that presents, dismisses and contains other views.
///
/// On Linux there is no UIKit: ``HeadlessViewController`` and its navigation, tab and window
/// relatives implement these protocols in memory and record what was shown.
public protocol PresentingViewControllable: ViewControllable {
    /// Presents `viewController` modally over this view.
    func present(_ viewController: ViewControllable, withModalStyle modalStyle: ModalStyle, animated: Bool)
    /// Dismisses `viewController` if this view presented it.
    func dismiss(_ viewController: ViewControllable, animated: Bool)
    /// Embeds `viewController` as a child view.
    func contain(_ viewController: ViewControllable)
    /// Removes an embedded child view.
    func uncontain(_ viewController: ViewControllable)
}

extension PresentingViewControllable {
    /// Presents full screen, animated.
    public func present(_ viewController: ViewControllable) {
        present(viewController, withModalStyle: .cover, animated: true)
    }

    /// Dismisses, animated.
    public func dismiss(_ viewController: ViewControllable) {
        dismiss(viewController, animated: true)
    }
}

/// A navigation stack.
public protocol NavigationControllable: PresentingViewControllable {
    /// The stack, bottom first.
    var viewControllers: [ViewControllable] { get }
    /// Pushes a view on the stack.
    func push(_ viewController: ViewControllable, animated: Bool)
    /// Pops back to just below `viewController`, if it is on the stack.
    func pop(_ viewController: ViewControllable, animated: Bool)
    /// Replaces the stack.
    func setViewControllers(_ viewControllers: [ViewControllable], animated: Bool)
}

/// A tab container.
public protocol TabBarControllable: PresentingViewControllable {
    /// The tabs, in order.
    var viewControllers: [ViewControllable] { get }
    /// The index of the selected tab.
    var selectedIndex: Int { get set }
    /// Replaces the tabs.
    func setViewControllers(_ viewControllers: [ViewControllable], animated: Bool)
}

/// A window that shows one root view.
@preconcurrency @MainActor
public protocol WindowViewControllable: AnyObject {
    /// The view the window shows.
    var rootViewController: ViewControllable? { get set }
    /// Makes the window visible.
    func makeKeyAndVisible()
}

/// A scene that owns windows.
@preconcurrency @MainActor
public protocol WindowSceneViewControllable: AnyObject {
    /// The scene's windows.
    var windows: [WindowViewControllable] { get }
}
