// Traps that name the mistake in every build configuration (behaviour contract X3: "Programming
// errors stop the process with a message naming the mistake").
//
// `precondition` and `preconditionFailure` print their message in debug builds only: under `-O`
// Swift keeps the check but drops the text, and a release build stops with a bare "precondition
// failure" or with no message at all. `fatalError` keeps its message under `-O`. So every trap
// in RunLoopKit's sources (Core, the backends, the adapters) goes through `trap(_:file:line:)`
// or `trap(unless:_:file:line:)`, and none uses `precondition`, `preconditionFailure` or
// `fatalError` itself; `scripts/test` fails on one that does. Both are `package`: reachable from
// every target of this package without Foundation, and no part of the public API.

/// Stops the process with `message`: written to standard error with the file and line
/// (`RunLoopCore/Loop+Run.swift:25: Fatal error: …`), then a trap, in debug and release builds
/// alike.
///
/// The one place RunLoopKit's traps end. `@inline(never)` keeps the message's formatting and
/// the call to `fatalError` out of the callers; `-> Never` makes every path that reaches it a
/// cold one, so a check costs its caller a compare and a branch; `message` is an autoclosure,
/// built only when the process is about to stop.
@inline(never) @usableFromInline
package func trap(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message(), file: file, line: line)
}

/// Traps with `message` unless `condition` holds: `precondition`, with its message kept in
/// release builds (see `trap(_:file:line:)`).
@inlinable
package func trap(
    unless condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if _slowPath(!condition) { trap(message(), file: file, line: line) }
}
