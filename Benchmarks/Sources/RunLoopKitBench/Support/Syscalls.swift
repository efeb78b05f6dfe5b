import Glibc

/// timerfd and prctl, which neither Glibc's Swift module nor the package's C shims declare
/// (and the harness may not add a shim: Package.swift is not ours to change). They are looked
/// up once in libc with dlsym and called through C function pointers.
enum Syscalls {
    private typealias TimerfdCreate = @convention(c) (Int32, Int32) -> Int32
    private typealias TimerfdSettime = @convention(c) (Int32, Int32, UnsafePointer<itimerspec>, UnsafeMutablePointer<itimerspec>?) -> Int32
    // prctl is variadic in C; on x86-64 and arm64 Linux a variadic callee reads integer
    // arguments from the same registers as a fixed-arity one, so this call is well-defined there.
    private typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32

    private static func symbol<T>(_ name: String, as type: T.Type) -> T {
        guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("runloopkit-bench: \(name) not found in libc")
        }
        return unsafeBitCast(pointer, to: type)
    }

    nonisolated(unsafe) private static let timerfdCreate = symbol("timerfd_create", as: TimerfdCreate.self)
    nonisolated(unsafe) private static let timerfdSettime = symbol("timerfd_settime", as: TimerfdSettime.self)
    nonisolated(unsafe) private static let prctlFunction = symbol("prctl", as: Prctl.self)

    static let timerfdCloexec: Int32 = 0o2000000  // TFD_CLOEXEC == O_CLOEXEC
    static let timerfdNonblock: Int32 = 0o4000  // TFD_NONBLOCK == O_NONBLOCK
    static let timerfdAbsolute: Int32 = 1  // TFD_TIMER_ABSTIME
    static let setTimerSlack: Int32 = 29  // PR_SET_TIMERSLACK

    static func timerfd_create(_ clock: Int32, _ flags: Int32) -> Int32 { timerfdCreate(clock, flags) }

    static func timerfd_settime(_ fd: Int32, _ flags: Int32, _ value: inout itimerspec) -> Int32 {
        timerfdSettime(fd, flags, &value, nil)
    }

    /// Sets the calling thread's timer slack (PR_SET_TIMERSLACK); 0 restores the default.
    @discardableResult
    static func setTimerSlack(nanoseconds: UInt) -> Int32 { prctlFunction(setTimerSlack, nanoseconds, 0, 0, 0) }
}
