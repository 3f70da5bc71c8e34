import Nodes

/// The app's view controller base class: its "Custom" UI framework on Linux, as the generator's
/// config names it (`viewControllerType: AppViewController`, `import: AppUI`). Whoever shows a
/// view drives its lifecycle: ``appear()`` loads it once and calls ``viewWillAppear()``,
/// ``disappear()`` calls ``viewWillDisappear()``.
@MainActor
open class AppViewController: ViewControllable {
    /// Whether ``viewDidLoad()`` ran.
    public private(set) var isViewLoaded = false
    /// Whether the view is on screen.
    public private(set) var isVisible = false
    /// The views this one presents, in order.
    public private(set) var presented: [ViewControllable] = []

    /// A view controller that is not loaded yet.
    public init() {}

    /// Called once, before the view first appears.
    open func viewDidLoad() {}

    /// Called each time the view is about to appear.
    open func viewWillAppear() {}

    /// Called each time the view is about to disappear.
    open func viewWillDisappear() {}

    /// Loads the view if needed and shows it.
    public final func appear() {
        guard !isVisible else { return }
        if !isViewLoaded {
            isViewLoaded = true
            viewDidLoad()
        }
        viewWillAppear()
        isVisible = true
    }

    /// Hides the view.
    public final func disappear() {
        guard isVisible else { return }
        viewWillDisappear()
        isVisible = false
    }

    /// Presents `viewController` over this view.
    public func present(_ viewController: ViewControllable) {
        presented.append(viewController)
        (viewController as? AppViewController)?.appear()
    }

    /// Dismisses `viewController` if this view presented it.
    public func dismiss(_ viewController: ViewControllable) {
        guard let index = presented.firstIndex(where: { $0 === viewController }) else { return }
        presented.remove(at: index)
        (viewController as? AppViewController)?.disappear()
    }
}
