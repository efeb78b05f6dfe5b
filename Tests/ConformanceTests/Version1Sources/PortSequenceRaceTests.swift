import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// The cross-thread windows of port capacity and the loop-served sequences (behaviour
/// contract › D4: Message ports; L4: Everything else from any thread), many rounds each,
/// scaled by `RUNLOOPKIT_STRESS_SCALE`.
///
/// Windows: a place freed by the consumer vs. senders getting in line (a sender admitted twice
/// or never, a place given out of order); a consumer's cancellation vs. the loop handing it a
/// message (the message lost: taken from the port but never returned; or the source left in
/// the loop); the iteration ending vs. a message arriving (a message taken for a consumer that
/// is gone); a waiting sender's cancellation vs. its admission (a message queued although its
/// sender was told it was not, or the reverse); a readiness consumer's cancellation vs. the
/// descriptor becoming ready (the source left watching).
@Suite("Port capacity and sequences: races")
struct PortSequenceRaceTests {
    @Test(
        "4 senders waiting for room vs. a consumer taking: every message once, each sender's in order",
        arguments: backends)
    func sendersVersusConsumer(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let rounds = scaled(40, minimum: 4)
            let perSender = scaled(500, minimum: 50)
            for round in 1...rounds {
                let port = try Loop.Port<Int>(capacity: 1 + round % 3)
                let senders = (0..<4).map { sender in
                    Task {
                        for index in 0..<perSender { try await port.sendWaitingForRoom(sender * 1_000_000 + index) }
                    }
                }
                let received = try await within {
                    var received: [Int] = []
                    for try await message in port.messages(on: worker.loop) {
                        received.append(message)
                        if received.count == 4 * perSender { break }
                    }
                    return received
                }
                for sender in senders { try await within { try await sender.value } }
                for sender in 0..<4 {
                    let own = received.filter { $0 / 1_000_000 == sender }.map { $0 % 1_000_000 }
                    #expect(own == Array(0..<perSender), "round \(round), sender \(sender)")
                }
                #expect(port.waitingSenderCount == 0)
                #expect(worker.loop.registeredDescriptorCount == 0)
            }
        }
    }

    @Test(
        "a consumer's cancellation racing a message: it gets the message or the message stays in the port, never both or neither",
        arguments: backends)
    func cancellationVersusDelivery(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let rounds = scaled(300, minimum: 30)
            var handed = 0
            for round in 1...rounds {
                let port = try Loop.Port<Int>()
                let waiting = AsyncGate()
                var messages = port.messages(on: worker.loop)
                messages.onWaiting = { waiting.open() }
                let consumer = Task {
                    var iterator = messages.makeAsyncIterator()
                    return try await iterator.next()
                }
                try await waiting.wait()
                // The message wakes the loop, which hands it over; the cancellation lands anywhere
                // from before that wake to after the hand-over.
                port.send(round)
                sweptDelay(round: round)
                consumer.cancel()
                let got = try await within { try await consumer.value }
                port.close()
                let rest = try await within {
                    var rest: [Int] = []
                    for try await message in port.messages(on: worker.loop) { rest.append(message) }
                    return rest
                }
                #expect(
                    (got.map { [$0] } ?? []) + rest == [round],
                    "round \(round): got \(String(describing: got)), rest \(rest)")
                #expect(worker.loop.registeredDescriptorCount == 0, "round \(round): the source stayed in the loop")
                if got != nil { handed += 1 }
            }
            print("cancellation vs delivery: the consumer got the message in \(handed) of \(rounds) rounds")
        }
    }

    @Test(
        "the iteration ending while messages keep arriving: what was not handed stays in the port, in order",
        arguments: backends)
    func iterationEndVersusMessages(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let rounds = scaled(100, minimum: 10)
            let count = 200
            for round in 1...rounds {
                let port = try Loop.Port<Int>(capacity: 1 + round % 8)
                let sender = Task {
                    for message in 1...count { try await port.sendWaitingForRoom(message) }
                }
                let take = 1 + round % 17
                let taken = try await within {
                    var taken: [Int] = []
                    for try await message in port.messages(on: worker.loop) {
                        taken.append(message)
                        if taken.count == take { break }
                    }
                    return taken
                }
                let rest = try await within {
                    var rest: [Int] = []
                    for try await message in port.messages(on: worker.loop) {
                        rest.append(message)
                        if taken.count + rest.count == count { break }
                    }
                    return rest
                }
                try await within { try await sender.value }
                #expect(taken + rest == Array(1...count), "round \(round)")
                #expect(worker.loop.registeredDescriptorCount == 0, "round \(round): a source stayed in the loop")
            }
        }
    }

    @Test(
        "a waiting sender's cancellation racing its admission: its message is queued exactly when it was told so",
        arguments: backends)
    func senderCancellationVersusAdmission(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let rounds = scaled(300, minimum: 30)
            var admitted = 0
            for round in 1...rounds {
                let port = try Loop.Port<Int>(capacity: 1)
                port.send(0)
                let sender = Task { try await port.sendWaitingForRoom(round) }
                try await within { await port.untilSendersWait(1) }
                // A port source on the loop frees the place (admitting the sender) while the
                // sender is cancelled.
                let received = Lock<[Int]>([])
                let firstTaken = AsyncGate()
                let source = Loop.Source(port: port) { message in
                    received.withLock { $0.append(message) }
                    firstTaken.open()
                }
                worker.loop.add(source, to: .default)
                sweptDelay(round: round)
                sender.cancel()
                try await firstTaken.wait()
                let sent = try await within { await sender.result }
                source.invalidate()
                // Once a block posted after the invalidation ran, no delivery is under way.
                #expect(worker.perform(waitUntilDone: true) {})
                port.close()
                let rest = try await within {
                    var rest: [Int] = []
                    for try await message in port.messages(on: worker.loop) { rest.append(message) }
                    return rest
                }
                let all = received.withLock { $0 } + rest
                switch sent {
                case .success:
                    admitted += 1
                    #expect(all == [0, round], "round \(round): told sent, but the messages were \(all)")
                case let .failure(error):
                    #expect(error is CancellationError, "round \(round): \(error)")
                    #expect(all == [0], "round \(round): told cancelled, but the messages were \(all)")
                }
                #expect(port.waitingSenderCount == 0)
            }
            print("sender cancellation vs admission: admitted in \(admitted) of \(rounds) rounds")
        }
    }

    @Test(
        "a readiness consumer's cancellation racing the descriptor becoming ready: the source never stays in the loop",
        arguments: backends)
    func readinessCancellationVersusReady(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let pipe = try Pipe()
            defer { pipe.close() }
            let rounds = scaled(300, minimum: 30)
            var handed = 0
            for round in 1...rounds {
                let waiting = AsyncGate()
                var readiness = try worker.loop.readiness(of: pipe.readEnd)
                readiness.onWaiting = { waiting.open() }
                let consumer = Task {
                    var iterator = readiness.makeAsyncIterator()
                    return try await iterator.next()
                }
                try await waiting.wait()
                pipe.fill()
                sweptDelay(round: round)
                consumer.cancel()
                let got = try await within { try await consumer.value }
                #expect(got == nil || got?.contains(.readable) == true, "round \(round): \(String(describing: got))")
                #expect(worker.loop.registeredDescriptorCount == 0, "round \(round): the source stayed in the loop")
                pipe.drain()
                if got != nil { handed += 1 }
            }
            print("readiness cancellation vs ready: the consumer got the readiness in \(handed) of \(rounds) rounds")
        }
    }
}

/// A short delay swept over the rounds (0 to some tens of microseconds, never waiting for
/// anything): the racing call lands at a different point of the other side's work each round.
private func sweptDelay(round: Int) {
    var spins = (round * 7_919) % 40_000
    while spins > 0 {
        spins -= 1
        atomicMemoryFence(ordering: .relaxed)
    }
}
