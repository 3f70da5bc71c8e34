/// Which way a tree grows on the page.
public enum DiagramOrientation: String, Sendable, CaseIterable {
    /// Whichever fits the page better (see ``LayoutChoice``).
    case auto
    /// Roots at the top, children below their parent.
    case topDown = "top-down"
    /// Roots at the left, children to the right of their parent.
    case leftToRight = "left-right"
}
