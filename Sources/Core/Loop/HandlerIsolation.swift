// Handlers written in main-actor code (top-level code, `@MainActor` functions) are main-actor
// code: their parameters are `@isolated(any)` with `@_inheritActorContext`, so such a closure
// captures the main actor as its isolation instead of failing to compile when it touches
// main-actor state. The loop honours that isolation: it runs such a handler only where the
// isolation holds, and checks it at each call.
//
// Calling such a handler: Swift has no synchronous call of an `@isolated(any)` function, even
// where its isolation has been checked (SE-0431 makes every call an `await`), and a loop's
// callouts are synchronous. An `@isolated(any)` function is represented as an ordinary thick
// function whose context carries the isolation (same size and calling convention; `isolation`
// reads it from the context), so each initializer `unsafeBitCast`s it to the same function
// type without `@isolated(any)`, and `checked(_:)` puts the runtime check in front of it.
// MainActorHandlerTests calls handlers of each shape with arguments, so a toolchain that
// changed the representation fails them.

/// The actor a handler is isolated to (its `@isolated(any)` `isolation`), and where a loop may
/// run it.
package struct HandlerIsolation: Sendable {
    /// `nil` for a nonisolated handler, which any loop may run.
    let actor: (any Actor)?

    package init(_ actor: (any Actor)?) { self.actor = actor }

    /// Whether the handler is main-actor code.
    var isMainActor: Bool { actor.map { $0 === MainActor.shared } ?? false }

    /// Why `loop` cannot run the handler, or `nil` when it can: a main-actor handler runs only
    /// on the main loop, a handler isolated to another actor only on the loop that is that
    /// actor's executor.
    func refusal(by loop: Loop) -> String? {
        guard let actor else { return nil }
        if isMainActor {
            return loop.isMain ? nil : "has a main-actor handler, which only Loop.main (the main thread) may run"
        }
        let executor = actor.unownedExecutor.asSerialExecutor()
        if let executorLoop = executor as? Loop, executorLoop === loop { return nil }
        return "has a handler isolated to \(actor), whose executor is not this loop"
    }

    /// Traps with `refusal(by:)`'s reason, naming `item` and `loop`, when `loop` cannot run the
    /// handler. `operation` names the call refused (`Loop.add(_:to:)`).
    func admit(_ item: some CustomStringConvertible, to loop: Loop, by operation: StaticString) {
        if let reason = refusal(by: loop) {
            trap("\(operation): \(item) \(reason); \(loop) cannot run it")
        }
    }

    /// `call` preceded by a check that the calling thread is isolated to the handler's actor:
    /// a check, not an assumption. The loop has admitted only the two kinds `refusal(by:)`
    /// allows, and checks each itself so that the trap keeps its message in release builds
    /// (`preconditionIsolated` drops it there when the executor answers "no" without trapping,
    /// as `MainLoopExecutor` does): the main actor runs on the main thread; an actor whose
    /// executor is a loop runs where that loop's `checkIsolated` passes (its thread, or the
    /// ended loop's executor, rule E3). Used only for an isolated handler: a nonisolated one is
    /// stored as it is, with no wrapper to go through.
    package func checked<each Argument>(
        _ call: @escaping @Sendable (repeat each Argument) -> Void
    ) -> @Sendable (repeat each Argument) -> Void {
        guard let actor else { trap("HandlerIsolation.checked(_:): the handler is nonisolated") }
        let isMainActor = self.isMainActor
        let executorLoop = isMainActor ? nil : actor.unownedExecutor.asSerialExecutor() as? Loop
        // An actor of neither kind is refused when the handler is added, so never called.
        return { (argument: repeat each Argument) in
            let isolated = isMainActor ? Loop.isOnMainThread : executorLoop?.isIsolatedHere ?? false
            trap(unless: isolated, "RunLoopKit: a handler isolated to \(actor) was called off that actor")
            call(repeat each argument)
        }
    }
}
