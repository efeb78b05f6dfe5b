internal import CRunLoopSupport
import SystemPackage

extension Loop.Source {
    /// Refuses negative, closed and never-pollable descriptors: a descriptor source is made
    /// only for a file some backend can watch.
    static func validate(fileDescriptor fd: Int32) throws(ArgumentError) {
        guard fd >= 0 else {
            throw ArgumentError(argument: "fileDescriptor", value: "\(fd)", reason: "a descriptor must not be negative")
        }
        let info: Stat
        do {
            info = try FileDescriptor(rawValue: fd).stat()
        } catch {
            throw ArgumentError(
                argument: "fileDescriptor", value: "\(fd)",
                reason: "the descriptor is not open (\(describeErrno(error.rawValue)))")
        }
        guard !info.isAlwaysReady else {
            throw ArgumentError(
                argument: "fileDescriptor", value: "\(fd)",
                reason: "regular files and directories are always ready and cannot be watched")
        }
        // Some devices (/dev/null, say) have no readiness either: refused here, the same on
        // every backend, rather than refused by one when armed and always ready on another.
        if rlk_supports_polling(fd) == 0 {
            throw ArgumentError(
                argument: "fileDescriptor", value: "\(fd)",
                reason: "the file does not support readiness notification (poll), so it cannot be watched")
        }
    }
}
