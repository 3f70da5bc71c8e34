import NodescopeWire

/// What a session holds in memory, and how an ended session gives back what it no longer needs.
extension HostSession {
    /// UTF-8 bytes of the session's interned strings.
    var stringBytes: Int { strings.byteCount }

    /// Keeps only the strings that the tree (kinds, names, object roles and types) and the
    /// origins (site files, test suites and names) name. Leak records and retainer paths hold
    /// their own text, so nothing they show depends on the strings dropped. Called when the
    /// session has ended: a host may have interned up to ``CollectorSettings/maxStringBytesPerSession``
    /// of strings that no node uses, and an ended session is kept for minutes.
    mutating func compactStrings() {
        var used = Set<UInt32>()
        for slot in tree.usedSlots {
            let node = tree.slots[Int(slot)]
            used.insert(node.kind)
            used.insert(node.name)
            for object in node.objects {
                used.insert(object.role)
                used.insert(object.typeName)
            }
        }
        for site in origins.sites.values { used.insert(site.file) }
        for test in origins.tests.values {
            used.insert(test.suite)
            used.insert(test.name)
        }
        used.remove(0)
        guard used.count < strings.count else { return }
        strings = strings.keeping { used.contains($0) }
    }
}

extension HostSession {
    /// Whether the session's own rules accept `frame` (so that room is made for it only then).
    func wouldKeep(_ frame: DefineStringFrame) -> Bool {
        phase.acceptsFrames && frame.stringID != 0 && !strings.contains(frame.stringID)
            && strings.count < settings.maxStringsPerSession
            && strings.byteCount + frame.value.utf8.count <= settings.maxStringBytesPerSession
    }
}
