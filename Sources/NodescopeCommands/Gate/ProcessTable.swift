import Foundation

/// The processes of the machine as `/proc` shows them: who is whose parent.
enum ProcessTable {
    /// The live processes below `ancestor` (children, their children …), zombies left out.
    static func descendants(of ancestor: pid_t) -> [pid_t] {
        var children: [pid_t: [pid_t]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let (state, parent) = stateAndParent(of: pid), state != "Z" else { continue }
            children[parent, default: []].append(pid)
        }
        var found: [pid_t] = []
        var stack = children[ancestor] ?? []
        while let pid = stack.popLast() {
            found.append(pid)
            stack += children[pid] ?? []
        }
        return found
    }

    /// A process's state letter and parent pid, from `/proc/PID/stat`; nil when it is gone.
    static func stateAndParent(of pid: pid_t) -> (Character, pid_t)? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // The name, in parentheses, may itself hold spaces and parentheses: the fields follow the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count >= 2, let state = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
        return (state, parent)
    }
}
