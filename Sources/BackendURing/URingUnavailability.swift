#if URing
internal import CLibURing
import Glibc
import RunLoopCore
import SystemPackage

extension URingBackend {
    /// Why io_uring cannot start, from the `errno` that `io_uring_setup` failed with.
    ///
    /// A pure function of its inputs so the mapping can be tested without a kernel that
    /// refuses io_uring.
    ///
    /// - Parameters:
    ///   - errno: what `io_uring_setup` (through `io_uring_queue_init_params`) reported.
    ///   - ioUringDisabled: the value of `/proc/sys/kernel/io_uring_disabled`, `nil` when the
    ///     sysctl does not exist (kernels before 6.6).
    /// - Returns: `.kernelTooOld` for `ENOSYS`; `.disabledByKernel` for `EPERM` while the
    ///   sysctl is non-zero; `.blockedBySandbox` for any other `EPERM` or `EACCES` (seccomp,
    ///   container profiles); `.lockedMemoryLimit` for `ENOMEM` (before Linux 5.12 the rings
    ///   are charged to `RLIMIT_MEMLOCK`); `.other` otherwise.
    ///
    /// Safe to call from any thread.
    package static func unavailability(setupErrno errno: Errno, ioUringDisabled: Int?) -> Unavailability {
        let error = SystemError("io_uring_setup", errno: errno)
        switch errno {
        case .noFunction: return .kernelTooOld(error)
        case .notPermitted where (ioUringDisabled ?? 0) != 0: return .disabledByKernel(error)
        case .notPermitted, .permissionDenied: return .blockedBySandbox(error)
        case .noMemory: return .lockedMemoryLimit(error)
        default: return .other(error)
        }
    }

    /// Refuses a kernel without the operations this backend is built on: poll requests
    /// (Linux 5.1) and `IORING_OP_MSG_RING` for the waker (Linux 5.18).
    ///
    /// - Throws: `BackendError/unavailable(_:_:)` with `Unavailability/kernelTooOld(_:)`.
    static func requireOperations(of ring: URingRing) throws(BackendError) {
        let needed: [(io_uring_op, String)] = [
            (IORING_OP_POLL_ADD, "IORING_OP_POLL_ADD"),
            (IORING_OP_POLL_REMOVE, "IORING_OP_POLL_REMOVE"),
            (IORING_OP_MSG_RING, "IORING_OP_MSG_RING"),
        ]
        for (operation, name) in needed where !ring.supports(operation) {
            throw .unavailable(.uring, .kernelTooOld(SystemError(name, errno: EOPNOTSUPP)))
        }
    }

    /// The `kernel.io_uring_disabled` sysctl, or `nil` when this kernel does not have it.
    static func readIoUringDisabled() -> Int? {
        guard let file = fopen("/proc/sys/kernel/io_uring_disabled", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 32)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int(text.filter { !$0.isWhitespace })
    }
}
#endif
