/// What to draw of a diagram and how to lay it out.
public struct DiagramOptions: Sendable, Equatable {
    /// How to place the boxes.
    public var layout: DiagramLayout
    /// Which way the tree grows; ``DiagramOrientation/auto`` picks what fits the page.
    public var orientation: DiagramOrientation
    /// The page to fit: the layout and orientation are chosen for it, and an SVG bigger than the
    /// page is scaled down as far as its text stays readable (8 points). `nil`: no page; the
    /// choice aims at a 4:3 drawing of at most ``LayoutChoice/defaultPage``, drawn at full size.
    public var page: DiagramPage?
    /// With ``DiagramLayout/auto``, diagrams with more nodes than this never use Graphviz's
    /// `dot` engine (which is quadratic).
    public var autoTidyThreshold: Int
    /// Runs of consecutive siblings with the same title that are longer than this keep their
    /// first few members and fold the rest into one placeholder, such as
    /// "… 240 more FeedItemFlow". Siblings that are leaked, late, unverified or awaiting release
    /// (or have such a node below them) always stay visible.
    public var collapseSiblingRunsLongerThan: Int
    /// When set, nodes deeper than this are folded into one placeholder per cut parent
    /// (roots are at depth 0).
    public var maxDepth: Int?
    /// When set, only the subtree of the node with this id is drawn.
    public var rootID: UInt64?

    /// Creates options; the defaults draw everything with the automatic layout.
    public init(
        layout: DiagramLayout = .auto,
        orientation: DiagramOrientation = .auto,
        page: DiagramPage? = nil,
        autoTidyThreshold: Int = 500,
        collapseSiblingRunsLongerThan: Int = 12,
        maxDepth: Int? = nil,
        rootID: UInt64? = nil
    ) {
        self.layout = layout
        self.orientation = orientation
        self.page = page
        self.autoTidyThreshold = autoTidyThreshold
        self.collapseSiblingRunsLongerThan = collapseSiblingRunsLongerThan
        self.maxDepth = maxDepth
        self.rootID = rootID
    }
}
