import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// A port's messages as an async sequence a loop serves (behaviour contract › D4: Message
/// ports): in order, none lost, nothing taken before it is asked for; cancellation and the end
/// of the iteration take the source out of the loop; a loop that ends while the consumer
/// waits ends the wait with `LoopSequenceError.loopEnded`.
@Suite("Port messages as an async sequence")
struct PortMessagesTests {
    @Test("messages sent from another thread arrive in order; closing the port ends the sequence", arguments: backends)
    func inOrderThenEnd(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>()
            let producer = try TestThread {
                for message in 1...2_000 { port.send(message) }
                port.close()
            }
            let received = try await within {
                var received: [Int] = []
                for try await message in port.messages(on: worker.loop) { received.append(message) }
                return received
            }
            #expect(producer.join())
            #expect(received == Array(1...2_000))
            #expect(worker.loop.registeredDescriptorCount == 0)
        }
    }

    @Test(
        "a waiting consumer is handed a message sent later, on the loop; the source is in the loop only while it waits",
        arguments: backends)
    func waitingConsumerHandedLater(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<String>()
            let waiting = AsyncGate()
            var messages = port.messages(on: worker.loop)
            messages.onWaiting = { waiting.open() }
            let consumer = Task {
                var iterator = messages.makeAsyncIterator()
                return try await iterator.next()
            }
            try await waiting.wait()
            #expect(
                await loopWatchesWaitingConsumer(worker.loop),
                "the loop never watched the waiting consumer's descriptor")
            port.send("late")
            #expect(try await within { try await consumer.value } == "late")
            #expect(worker.loop.registeredDescriptorCount == 0)
            let statistics = try await statisticsOnLoopThread(worker.loop)
            #expect(statistics.callouts.portMessage == 1)
        }
    }

    @Test(
        "messages not asked for stay in the port and hold their places: capacity pushes back through the sequence",
        arguments: backends)
    func backPressureThroughSequence(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>(capacity: 2)
            let trace = Trace()
            try await within {
                var iterator = port.messages(on: worker.loop).makeAsyncIterator()
                for message in 1...3 { trace(port.trySend(message).label) }
                trace("next \(try await iterator.next().map(String.init) ?? "nil")")
                for message in 3...4 { trace(port.trySend(message).label) }
                trace("next \(try await iterator.next().map(String.init) ?? "nil")")
                trace("next \(try await iterator.next().map(String.init) ?? "nil")")
            }
            #expect(trace.all == ["sent", "sent", "full 3", "next 1", "sent", "full 4", "next 2", "next 3"])
        }
    }

    @Test(
        "a slow consumer pushes back: a waiting sender resumes when the consumer takes a message",
        arguments: backends)
    func waitingSenderResumesOnNext(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>(capacity: 1)
            port.send(1)
            let sender = Task { try await port.sendWaitingForRoom(2) }
            try await within { await port.untilSendersWait(1) }
            let received = try await within {
                var iterator = port.messages(on: worker.loop).makeAsyncIterator()
                let first = try await iterator.next()
                try await sender.value // Admitted when 1 was taken.
                let second = try await iterator.next()
                return [first, second]
            }
            #expect(received == [1, 2])
        }
    }

    @Test(
        "cancelling the consuming task ends its wait with nil, takes the source out, and leaves later messages in the port",
        arguments: backends)
    func consumerCancelled(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>()
            let waiting = AsyncGate()
            var messages = port.messages(on: worker.loop)
            messages.onWaiting = { waiting.open() }
            let consumer = Task {
                var received: [Int] = []
                for try await message in messages { received.append(message) }
                return received
            }
            try await waiting.wait()
            consumer.cancel()
            #expect(try await within { try await consumer.value } == [])
            #expect(worker.loop.registeredDescriptorCount == 0)
            port.send(7)
            port.close()
            let rest = try await within {
                var rest: [Int] = []
                for try await message in port.messages(on: worker.loop) { rest.append(message) }
                return rest
            }
            #expect(rest == [7])
        }
    }

    @Test(
        "a sequence in .common is served in every common mode and leaves every one of them",
        arguments: backends)
    func servedInCommonModes(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            worker.loop.addCommonMode("tracking")
            let port = try Loop.Port<Int>()
            let pipe = try Pipe()
            defer { pipe.close() }
            let waiting = AsyncGate()
            var messages = port.messages(on: worker.loop, in: .common)
            messages.onWaiting = { waiting.open() }
            let consumer = Task {
                var iterator = messages.makeAsyncIterator()
                return try await iterator.next()
            }
            try await waiting.wait()
            #expect(
                await loopWatchesWaitingConsumer(worker.loop),
                "the loop never watched the waiting consumer's descriptor")
            port.send(5)
            #expect(try await within { try await consumer.value } == 5)
            #expect(worker.loop.registeredDescriptorCount == 0)
            // The same for a descriptor's readiness.
            pipe.fill()
            let readiness = try await within {
                var iterator = try worker.loop.readiness(of: pipe.readEnd, in: .common).makeAsyncIterator()
                return try await iterator.next()
            }
            #expect(readiness == .readable)
            #expect(worker.loop.registeredDescriptorCount == 0)
        }
    }

    @Test("closing the port while the consumer waits ends the sequence", arguments: backends)
    func closeWhileWaiting(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>(capacity: 3)
            let waiting = AsyncGate()
            var messages = port.messages(on: worker.loop)
            messages.onWaiting = { waiting.open() }
            let consumer = Task {
                var received: [Int] = []
                for try await message in messages { received.append(message) }
                return received
            }
            port.send(1)
            try await waiting.wait()
            port.close()
            #expect(try await within { try await consumer.value } == [1])
            #expect(worker.loop.registeredDescriptorCount == 0)
        }
    }

    @Test(
        "breaking out of the iteration leaves the rest in the port, in order, and no source in the loop",
        arguments: backends)
    func breakLeavesRest(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let port = try Loop.Port<Int>()
            for message in 1...5 { port.send(message) }
            let first = try await within {
                var taken: [Int] = []
                for try await message in port.messages(on: worker.loop) {
                    taken.append(message)
                    if taken.count == 2 { break }
                }
                return taken
            }
            port.close()
            let rest = try await within {
                var rest: [Int] = []
                for try await message in port.messages(on: worker.loop) { rest.append(message) }
                return rest
            }
            #expect(first == [1, 2])
            #expect(rest == [3, 4, 5])
            #expect(worker.loop.registeredDescriptorCount == 0)
        }
    }

    @Test(
        "the loop's thread ending while the consumer waits throws loopEnded; so does waiting on an ended loop",
        arguments: backends)
    func loopEndsWhileWaiting(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        let port = try Loop.Port<Int>()
        let waiting = AsyncGate()
        var messages = port.messages(on: worker.loop)
        messages.onWaiting = { waiting.open() }
        let consumer = Task {
            var iterator = messages.makeAsyncIterator()
            return try await iterator.next()
        }
        try await waiting.wait()
        worker.stop()
        let outcome = try await within { await consumer.result }
        #expect(throws: LoopSequenceError.loopEnded) { try outcome.get() }
        // Waiting on a loop that has ended fails at once; a queued message is still handed.
        port.send(1)
        let later = try await within {
            var iterator = port.messages(on: worker.loop).makeAsyncIterator()
            let first = try await iterator.next()
            do {
                _ = try await iterator.next()
                return "\(first.map(String.init) ?? "nil"), then no error"
            } catch {
                return "\(first.map(String.init) ?? "nil"), then \(error)"
            }
        }
        #expect(later == "1, then \(LoopSequenceError.loopEnded)")
    }
}
