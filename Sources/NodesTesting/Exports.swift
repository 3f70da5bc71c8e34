@_exported import Nodes
