import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// What the tests read from an SVG: whether it parses, its text, and each node group's title and
/// outline attributes.
final class SVGDocument: NSObject, XMLParserDelegate {
    struct NodeGroup {
        var title = ""
        /// Attributes of the first polygon or path in the group: the node's outline.
        var outline: [String: String] = [:]
        var texts: [String] = []
    }

    private(set) var nodes: [NodeGroup] = []
    /// The root `<svg>` element's width and height in points.
    private(set) var rootSize: (width: Double?, height: Double?) = (nil, nil)
    private(set) var texts: [String] = []
    private(set) var parseError: String?

    private var depthOfNodeGroup: Int?
    private var depth = 0
    private var element = ""
    private var characters = ""

    init(_ svg: String) {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        if !parser.parse() {
            parseError = parser.parserError.map { "\($0)" } ?? "unknown XML error"
        }
    }

    /// The node group whose `<title>` is `title` (graphviz names nodes `n<id>`).
    func node(titled title: String) -> NodeGroup? {
        nodes.first { $0.title == title }
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        depth += 1
        element = name
        characters = ""
        if name == "svg", depth == 1 {
            func points(_ value: String?) -> Double? {
                guard let value else { return nil }
                return Double(value.hasSuffix("pt") ? String(value.dropLast(2)) : value)
            }
            rootSize = (points(attributes["width"]), points(attributes["height"]))
        } else if name == "g", attributes["class"] == "node" {
            depthOfNodeGroup = depth
            nodes.append(NodeGroup())
        } else if depthOfNodeGroup != nil, name == "polygon" || name == "path", nodes[nodes.count - 1].outline.isEmpty {
            nodes[nodes.count - 1].outline = attributes
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        characters += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text" {
            texts.append(characters)
            if depthOfNodeGroup != nil { nodes[nodes.count - 1].texts.append(characters) }
        } else if name == "title", depthOfNodeGroup != nil {
            nodes[nodes.count - 1].title = characters
        } else if name == "g", depth == depthOfNodeGroup {
            depthOfNodeGroup = nil
        }
        characters = ""
        depth -= 1
    }
}
