import Glibc
import TestSupport

/// The descriptors open in this process at one moment, each with what it names (its
/// `/proc/self/fd` link: a path, `pipe:[inode]`, `anon_inode:[eventfd]`, …).
///
/// Only meaningful in a process where nothing else opens descriptors meanwhile: the tests that
/// compare two snapshots run their body in a child process (an exit test), because the test
/// runner's other tests open and close descriptors in parallel.
struct DescriptorSnapshot: Equatable, CustomStringConvertible {
    let entries: [Int32: String]

    /// Reads `/proc/self/fd` now.
    static func take() -> DescriptorSnapshot {
        guard let listing = directoryListing("/proc/self/fd") else { return DescriptorSnapshot(entries: [:]) }
        var entries: [Int32: String] = [:]
        for name in listing.names {
            guard let number = Int32(name), number != listing.ownDescriptor else { continue }
            entries[number] = link(of: name)
        }
        return DescriptorSnapshot(entries: entries)
    }

    var count: Int { entries.count }

    /// The descriptors open now that were not open (or named another file) in `earlier`.
    func added(since earlier: DescriptorSnapshot) -> [String] {
        entries.filter { earlier.entries[$0.key] != $0.value }.sorted { $0.key < $1.key }.map {
            "\($0.key) → \($0.value)"
        }
    }

    var description: String {
        entries.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value)" }.joined(separator: ", ")
    }

    private static func link(of name: String) -> String {
        var target = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
        guard length > 0 else { return "?" }
        return String(decoding: target[0..<length].map(UInt8.init(bitPattern:)), as: UTF8.self)
    }
}
