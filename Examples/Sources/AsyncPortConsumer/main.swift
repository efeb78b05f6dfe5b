// Producers on other threads send jobs into a port with a capacity; an async consumer
// iterates the port's messages, served by a worker thread's loop. The consumer is slow, so
// the port fills up and the producers wait for room: back-pressure, not a queue that grows.
//
// `trySend` reports a full port (handing the message back); `sendWaitingForRoom` waits until
// the consumer takes a message. `close()` ends the sequence once the last job is consumed.
//
//   swift run --package-path Examples async-port-consumer
import Dispatch
import RunLoopKit
import Synchronization

struct Job: Sendable {
    let producer: Int
    let number: Int
}

let capacity = 4
let producers = 3
let jobsPerProducer = 10

// The loop that serves the consumer's waits: a worker thread's, sleeping when there is
// nothing to hand over.
let worker = try LoopThread(name: "consumer-loop")
let port = try Loop.Port<Job>(capacity: capacity)

/// How many sends found the port full and had to wait for the consumer.
let waitedSends = Atomic<Int>(0)
let finished = DispatchSemaphore(value: 0)

// Producers: each on a task of its own (Swift's cooperative threads), none on the worker.
let producerTasks = (1...producers).map { producer in
    Task.detached {
        for number in 1...jobsPerProducer {
            let job = Job(producer: producer, number: number)
            switch port.trySend(job) {
            case .sent:
                continue
            case let .full(job):
                // The consumer is behind: wait for room instead of growing the queue.
                waitedSends.add(1, ordering: .relaxed)
                try await port.sendWaitingForRoom(job)
            case .closed:
                fatalError("the port closed before the producers were done")
            }
        }
    }
}

// The consumer: async code iterating the port's messages. Each message it has not asked for
// stays in the port and holds its place, so the port never holds more than `capacity`.
let consumer = Task.detached {
    var received = 0
    var lastNumber = [Int](repeating: 0, count: producers + 1)
    do {
        for try await job in port.messages(on: worker.loop) {
            precondition(job.number == lastNumber[job.producer] + 1, "job out of order")
            lastNumber[job.producer] = job.number
            received += 1
            if received % 10 == 0 { print("consumer: \(received) jobs so far") }
            try await Task.sleep(for: .milliseconds(2)) // A slow consumer.
        }
    } catch {
        print("consumer: \(error)")
    }
    return received
}

// Close the port once every producer is done: the consumer ends after the last job.
Task.detached {
    for task in producerTasks { try? await task.value }
    port.close()
    let received = await consumer.value
    print("consumer: received \(received) of \(producers * jobsPerProducer) jobs, each producer's in order")
    print(
        "back-pressure: \(waitedSends.load(ordering: .relaxed)) sends found the port full (capacity \(capacity)) and waited for the consumer"
    )
    finished.signal()
}
finished.wait()
worker.stop()
