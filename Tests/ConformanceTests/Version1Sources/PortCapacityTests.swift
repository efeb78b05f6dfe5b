import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Ports with a capacity (behaviour contract › D4: Message ports, and X1: Bad input is
/// refused): a full port refuses `trySend` and makes `sendWaitingForRoom` wait; waiting senders
/// are admitted first come first served as a receiver takes messages; cancellation and
/// `close()` end a wait with an error, never silently.
@Suite("Port capacity: full ports, waiting senders, close")
struct PortCapacityTests {
    @Test("a capacity below 1 is refused with an ArgumentError naming it")
    func capacityValidated() async throws {
        try await offThePool { () throws in
            for capacity in [0, -1] {
                #expect(throws: ArgumentError.self) { _ = try Loop.Port<Int>(capacity: capacity) }
                do {
                    _ = try Loop.Port<Int>(capacity: capacity)
                } catch let error as ArgumentError {
                    #expect(error.argument == "capacity")
                    #expect(error.value == "\(capacity)")
                }
            }
            #expect(try Loop.Port<Int>(capacity: 1).capacity == 1)
            #expect(try Loop.Port<Int>().capacity == nil)
        }
    }

    @Test("trySend on a full port hands the message back; a source taking the messages makes room", arguments: backends)
    func trySendReportsFull(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let port = try Loop.Port<Int>(capacity: 2)
            for message in 1...3 { trace(port.trySend(message).label) }
            let source = Loop.Source(port: port) { message in trace("received \(message)") }
            loop.add(source, to: .default)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            trace(port.trySend(3).label)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            source.invalidate()
        }
        #expect(trace.all == ["sent", "sent", "full 3", "received 1", "received 2", "sent", "received 3"])
    }

    @Test(
        "messages a source took in a batch hold their places until each is handed to the handler",
        arguments: backends)
    func batchCountsUntilHanded(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let port = try Loop.Port<Int>(capacity: 2)
            port.send(1)
            port.send(2)
            let source = Loop.Source(port: port) { message in
                trace("received \(message)")
                // 1 is handed (its place is free); 2 was taken in the same batch and still
                // holds its place: one place is free, not two.
                if message == 1 { for extra in [3, 4] { trace(port.trySend(extra).label) } }
            }
            loop.add(source, to: .default)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            source.invalidate()
        }
        #expect(trace.all == ["received 1", "sent", "full 4", "received 2", "received 3"])
    }

    @Test(
        "waiting senders are admitted first come first served as the receiver takes messages, none lost",
        arguments: backends)
    func waitingSendersAdmittedInOrder(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>(capacity: 1)
            port.send(0)
            var senders: [Task<Void, any Error>] = []
            for message in 1...3 {
                senders.append(Task { try await port.sendWaitingForRoom(message) })
                // Each sender is in line before the next starts: the line's order is known.
                try await within { await port.untilSendersWait(message) }
            }
            // Full, and senders wait: trySend does not jump the line.
            #expect(port.trySend(4).label == "full 4")
            let received = try await within {
                var received: [Int] = []
                for try await message in port.messages(on: worker.loop) {
                    received.append(message)
                    if received.count == 4 { break }
                }
                return received
            }
            for sender in senders { try await within { try await sender.value } }
            #expect(received == [0, 1, 2, 3])
            #expect(port.waitingSenderCount == 0)
        }
    }

    @Test(
        "a waiting sender whose task is cancelled throws CancellationError and its message is never queued",
        arguments: backends)
    func cancelledSender(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>(capacity: 1)
            port.send(1)
            let first = Task { try await port.sendWaitingForRoom(2) }
            try await within { await port.untilSendersWait(1) }
            let second = Task { try await port.sendWaitingForRoom(3) }
            try await within { await port.untilSendersWait(2) }
            first.cancel()
            let firstOutcome = try await within { await first.result }
            #expect(throws: CancellationError.self) { try firstOutcome.get() }
            #expect(port.waitingSenderCount == 1)
            port.close() // After 3 is admitted and received, the sequence ends.
            let received = try await within {
                var received: [Int] = []
                for try await message in port.messages(on: worker.loop) { received.append(message) }
                return received
            }
            // The second sender was waiting when the port closed: it is told so.
            let secondOutcome = try await within { await second.result }
            #expect(throws: PortClosedError.self) { try secondOutcome.get() }
            #expect(received == [1])
        }
    }

    @Test(
        "close() fails every waiting sender and later sends; messages queued before are still received",
        arguments: backends)
    func closeFailsSenders(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>(capacity: 2)
            port.send(1)
            port.send(2)
            let waiting = (3...4).map { message in Task { try await port.sendWaitingForRoom(message) } }
            try await within { await port.untilSendersWait(2) }
            port.close()
            port.close() // A second close has no effect.
            for sender in waiting {
                let outcome = try await within { await sender.result }
                #expect(throws: PortClosedError.self) { try outcome.get() }
            }
            #expect(port.isClosed)
            #expect(port.trySend(5).label == "closed 5")
            await #expect(throws: PortClosedError.self) { try await port.sendWaitingForRoom(6) }
            let received = try await within {
                var received: [Int] = []
                for try await message in port.messages(on: worker.loop) { received.append(message) }
                return received
            }
            #expect(received == [1, 2])
        }
    }

    @Test("an unbounded port never waits: send and sendWaitingForRoom queue at once", arguments: backends)
    func unboundedNeverWaits(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>()
            for message in 1...500 { port.send(message) }
            for message in 501...1000 { try await port.sendWaitingForRoom(message) }
            port.close()
            let received = try await within {
                var received: [Int] = []
                for try await message in port.messages(on: worker.loop) { received.append(message) }
                return received
            }
            #expect(received == Array(1...1000))
        }
    }
}

extension Loop.Port.SendAttempt {
    /// `sent`, or `full` / `closed` with the message handed back, for traces.
    var label: String {
        switch self {
        case .sent: "sent"
        case let .full(message): "full \(message)"
        case let .closed(message): "closed \(message)"
        }
    }
}
