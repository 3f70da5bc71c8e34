// An app that imports Nodes reports its tree through NodesDebug's types (NodeTracker,
// DebugInformation, NodeKind …) without a second import.
@_exported import NodesDebug
