/// A box holding a value that only its loop's thread may touch, shared by every closure that
/// holds the box.
///
/// The reference-type companion of ``LoopBound``: closures that capture the same box see one
/// value, and may change it, so handlers of one loop can share mutable state without a lock.
/// Every access checks that it happens on the loop's thread and traps elsewhere with a message
/// naming both threads.
///
/// ```swift
/// let ticks = LoopBoundBox(0, loop: loop)   // on the loop's thread
/// loop.add(try Loop.Timer(after: .zero, repeating: .seconds(1)) { _ in ticks.value += 1 }, to: .default)
/// loop.add(try Loop.Timer(after: .seconds(10)) { _ in print("ticks: \(ticks.value)") }, to: .default)
/// ```
///
/// Made off the loop's thread, use ``makeSending(_:loop:)``: the value is handed over, and
/// from then on only the loop's thread touches it.
public final class LoopBoundBox<Value>: @unchecked Sendable {
    // @unchecked: `storage` is reached only on `loop`'s thread, which every access checks
    // (after `makeSending`, whose value no one else holds).
    private var storage: Value

    /// The loop whose thread alone may touch the value.
    public let loop: Loop

    /// A box holding `value`, bound to `loop`'s thread; call it on that thread (it traps
    /// elsewhere).
    public init(_ value: Value, loop: Loop) {
        checkOnLoopThread(loop, "LoopBoundBox.init(_:loop:)", Value.self)
        self.storage = value
        self.loop = loop
    }

    private init(handingOver value: sending Value, loop: Loop) {
        self.storage = value
        self.loop = loop
    }

    /// A box holding `value`, bound to `loop`'s thread, made on any thread: `value` is sent
    /// (the caller keeps nothing of it), so only the loop's thread touches it from now on.
    public static func makeSending(_ value: sending Value, loop: Loop) -> LoopBoundBox<Value> {
        LoopBoundBox(handingOver: value, loop: loop)
    }

    /// The value; read or set it on the loop's thread only (it traps elsewhere, with a message
    /// naming the loop's thread and the calling one).
    public var value: Value {
        get {
            checkOnLoopThread(loop, "LoopBoundBox.value", Value.self)
            return storage
        }
        set {
            checkOnLoopThread(loop, "LoopBoundBox.value", Value.self)
            storage = newValue
        }
    }

    /// Runs `body` with the value to change in place (no copy of a collection), on the loop's
    /// thread only (it traps elsewhere).
    ///
    /// - Parameter body: reads or changes the value.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func withValue<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        checkOnLoopThread(loop, "LoopBoundBox.withValue(_:)", Value.self)
        return try body(&storage)
    }
}
