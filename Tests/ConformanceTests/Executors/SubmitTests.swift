import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// `submit`: a block's value awaited from async code, and a typed error, never a hang, when the
/// block will not run.
@Suite("Submit")
struct SubmitTests {
    @Test("submit runs the body on the loop's thread and returns its value", arguments: backends)
    func returnsValue(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let onLoopThread = try await withinDeadline("submit") {
                try await loop.submit { Loop.currentIfCreated === loop }
            }
            #expect(onLoopThread)
            let fromThread = try await withinDeadline("LoopThread.submit") { try await worker.submit { 6 * 7 } }
            #expect(fromThread == 42)
        }
    }

    @Test("submit rethrows the body's error, and a body made of non-Sendable state needs no lock", arguments: backends)
    func rethrowsAndSends(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let error = await #expect(throws: BodyError.self) {
                try await worker.submit { () throws -> Int in throw BodyError(code: 7) }
            }
            #expect(error == BodyError(code: 7))
            // A class that is not Sendable, sent to the loop (made here, changed there), and one
            // made there and sent back: no lock, no Sendable wrapper.
            let tally = Tally()
            tally.count = 1
            let counted = try await worker.submit {
                tally.count += 1
                return tally.count
            }
            #expect(counted == 2)
            let made = try await worker.submit {
                let fresh = Tally()
                fresh.count = 3
                return fresh
            }
            made.count += 1
            #expect(made.count == 4)
        }
    }

    @Test("submits from one task run in order, and in order with perform", arguments: backends)
    func orderWithinTask(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let trace = Trace()
            for index in 0..<20 {
                loop.perform { trace("perform \(index)") }
                let returned = try await loop.submit {
                    trace("submit \(index)")
                    return index
                }
                #expect(returned == index)
            }
            #expect(trace.all == (0..<20).flatMap { ["perform \($0)", "submit \($0)"] })
        }
    }

    @Test("submit from the loop's own thread is queued behind earlier blocks, not run inline", arguments: backends)
    func fromOwnThread(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let trace = Trace()
            let onOwnThread = try await withinDeadline("a submit from the loop's thread") {
                try await Task(executorPreference: loop) {
                    let caller = Loop.currentIfCreated === loop
                    loop.perform { trace("block queued before") }
                    try await loop.submit { trace("submitted") }
                    trace("caller resumed")
                    return caller
                }.value
            }
            #expect(onOwnThread)
            #expect(trace.all == ["block queued before", "submitted", "caller resumed"])
        }
    }

    @Test("submits from many tasks all run, each task's in order", arguments: backends)
    func manyTasks(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let seen = try await worker.submit { LoopBoundBox([Int: [Int]](), loop: loop) }
            let (tasks, each) = (8, 50)
            try await withinDeadline("every submit") {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<tasks {
                        group.addTask {
                            for index in 0..<each {
                                try await loop.submit { seen.withValue { $0[task, default: []].append(index) } }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let all = try await loop.submit { seen.value }
            #expect(all.count == tasks)
            for task in 0..<tasks { #expect(all[task] == Array(0..<each), "task \(task)") }
        }
    }

    @Test("a submit queued when the loop's thread ends gets loopEnded; a later one is refused", arguments: backends)
    func loopEndsWithSubmitQueued(_ backend: BackendKind) async throws {
        let parked = try ParkedLoop(backend, waitingFor: 1)
        let loop = parked.loop
        let ran = AtomicInt()
        let answer = Task { () -> SubmitError? in
            do throws(SubmitError) {
                try await loop.submit { ran.increment() }
                return nil
            } catch {
                return error
            }
        }
        #expect(await parked.waitUntilQueued())
        parked.unpark(.exit)
        let error = try await resultWithinDeadline("the queued submit", of: answer).get()
        #expect(error == .loopEnded)
        #expect(await parked.join())
        let late = try await withinDeadline("a submit to a torn-down loop") {
            do throws(SubmitError) {
                try await loop.submit { ran.increment() }
                return SubmitError?.none
            } catch {
                return error
            }
        }
        #expect(late == .refused)
        #expect(ran.value == 0)
    }

    @Test("submit to a stopped LoopThread is refused, the body never runs", arguments: backends)
    func stoppedLoopThread(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        worker.stop()
        let ran = AtomicInt()
        let error = await #expect(throws: SubmitError.self) {
            try await worker.submit { ran.increment() }
        }
        #expect(error == .refused)
        let throwing = await #expect(throws: SubmitError.self) {
            try await worker.submit { () throws in ran.increment() }
        }
        #expect(throwing == .refused)
        #expect(ran.value == 0)
    }
}

/// The error a test body throws.
struct BodyError: Error, Equatable {
    let code: Int
}

/// State that is not Sendable.
final class Tally {
    var count = 0
}
