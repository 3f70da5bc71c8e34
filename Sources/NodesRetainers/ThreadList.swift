import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread of this process as `/proc/self/task` shows it.
struct ThreadState {
    /// The kernel's thread id.
    var id: Int
    /// Its name (`comm`).
    var name: String
    /// Its stack pointer, when the thread is blocked (in a system call, as a thread that sleeps
    /// or waits is); nil while it runs.
    var stackPointer: UInt?
    /// The system call it is blocked in, when it is.
    var call: Int? = nil
}

/// The threads of this process.
enum ThreadList {
    /// Every thread, by id.
    static func read() -> [ThreadState] {
        ids().sorted().map { id in
            let base = "/proc/self/task/\(id)"
            let line = ProcFile.text("\(base)/syscall")
            return ThreadState(
                id: id, name: ProcFile.text("\(base)/comm") ?? "", stackPointer: stackPointer(line), call: call(line))
        }
    }

    /// The ids of the threads, unordered (the listing alone).
    static func ids() -> [Int] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var ids: [Int] = []
        while let entry = readdir(directory) {
            // The name is read in place, up to its NUL: copying `d_name` whole would read 256
            // bytes from a record that readdir sized to the name, past the end of its buffer
            // when the record is its last (the over-read that crashes Foundation's
            // Process.run, swift-corelibs-foundation#5472).
            guard let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { continue }
            if let id = Int(String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))) {
                ids.append(id)
            }
        }
        return ids
    }

    /// The system call in `/proc/…/syscall`: its number, when the thread is blocked in one.
    static func call(_ line: String?) -> Int? {
        guard let line, let first = line.split(separator: " ").first, let number = Int(first), number >= 0 else { return nil }
        return number
    }

    /// The stack pointer in `/proc/…/syscall`: `running`, or the call's number and arguments
    /// followed by the stack pointer and the program counter (`-1 sp pc` outside a call).
    static func stackPointer(_ line: String?) -> UInt? {
        guard let line else { return nil }
        let fields = line.split(separator: " ")
        guard fields.count >= 3, fields[0] != "running" else { return nil }
        let field = fields[fields.count - 2]
        guard field.hasPrefix("0x"), let value = UInt(field.dropFirst(2), radix: 16), value != 0 else { return nil }
        return value
    }
}
