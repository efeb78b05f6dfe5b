/// A value that only its loop's thread may touch, though the wrapper itself may travel.
///
/// Handlers, timers' callbacks and blocks are `@Sendable` closures, so the state they keep
/// must be `Sendable`; yet a loop runs them all on its one thread, so that state is never
/// touched concurrently. `LoopBound` says so and checks it: it is `Sendable`, whatever
/// `Value` is, and every access checks that it happens on the loop's thread (it traps
/// elsewhere with a message naming both threads). No lock is taken.
///
/// ```swift
/// let decoder = LoopBound(LineDecoder(), loop: loop)   // on the loop's thread
/// let source = try Loop.Source(fileDescriptor: descriptor) { _ in decoder.value.readAvailable(from: descriptor) }
/// loop.add(source, to: .default)
/// ```
///
/// A `LoopBound` is a value: a closure that captures it captures a copy, which it cannot
/// change. For state that handlers change, or that several handlers share, use
/// ``LoopBoundBox``.
///
/// The value is released wherever the last copy goes, which may be another thread: a `Value`
/// whose `deinit` must run on the loop's thread should be emptied there first.
public struct LoopBound<Value>: @unchecked Sendable {
    // @unchecked: `storage` is reached only through `value`, which checks that the caller is
    // on `loop`'s thread (the check is the whole point of the type).
    private var storage: Value

    /// The loop whose thread alone may touch the value.
    public let loop: Loop

    /// Wraps `value`, bound to `loop`'s thread; call it on that thread (it traps elsewhere).
    public init(_ value: Value, loop: Loop) {
        checkOnLoopThread(loop, "LoopBound.init(_:loop:)", Value.self)
        self.storage = value
        self.loop = loop
    }

    /// The value; read or set it on the loop's thread only (it traps elsewhere, with a message
    /// naming the loop's thread and the calling one).
    public var value: Value {
        get {
            checkOnLoopThread(loop, "LoopBound.value", Value.self)
            return storage
        }
        set {
            checkOnLoopThread(loop, "LoopBound.value", Value.self)
            storage = newValue
        }
    }
}

/// Traps unless the caller is on `loop`'s thread, naming `what` was touched, the loop's
/// thread and the calling thread (misuse traps with a message, behaviour contract X3, as
/// running a loop off its thread does, L3).
func checkOnLoopThread<Value>(_ loop: Loop, _ what: String, _ type: Value.Type) {
    guard !loop.isOnOwnThread else { return }
    trap(
        "\(what) (\(type)) touched on \(ThreadIdentity.current), but only \(loop)'s thread, "
            + "\(loop.ownerThreadDescription), may touch it")
}
