import Glibc
import MallocInterposerSwift
import Synchronization

// Counting with ordo-one's malloc interposer: its counters are process-wide (every thread's
// allocations summed), so each measurement also counts, through the interposer's allocation
// hook (called on the allocating thread), the allocations of one thread alone: the loop's.
// A measurement that has another thread post to the loop can then say whose allocation it saw.

/// The thread whose allocations the hook counts (a `pthread_t`), or 0 for none.
private let attributedThread = Atomic<UInt>(0)
/// Allocations the hook saw on `attributedThread` since the last `allocations(attributedTo:_:)`.
private let attributedAllocations = Atomic<Int>(0)

/// Called inside the allocator for each counted allocation: it must not allocate itself.
private let countIfAttributed: MallocInterposerSwift.AllocationHook = { _ in
    if pthread_self() == attributedThread.load(ordering: .relaxed) {
        attributedAllocations.add(1, ordering: .relaxed)
    }
}

/// Allocations made while `body` ran: on every thread, and on the thread `attributedTo` alone.
struct AllocationCount {
    var total = 0
    var onThread = 0

    static func += (left: inout AllocationCount, right: AllocationCount) {
        left.total += right.total
        left.onThread += right.onThread
    }
}

/// Counts the allocations `body` makes, and those of them made on `thread` (by default the
/// calling thread).
func allocations(attributedTo thread: pthread_t = pthread_self(), _ body: () -> Void) -> AllocationCount {
    // Globals touched (and so initialised) before the hook can run.
    attributedThread.store(thread, ordering: .relaxed)
    attributedAllocations.store(0, ordering: .relaxed)
    MallocInterposerSwift.setAllocationHook(countIfAttributed)
    MallocInterposerSwift.reset()
    MallocInterposerSwift.hook()
    body()
    MallocInterposerSwift.unhook()
    MallocInterposerSwift.setAllocationHook(nil)
    return AllocationCount(
        total: MallocInterposerSwift.getStatistics().mallocCount,
        onThread: attributedAllocations.load(ordering: .relaxed))
}

/// Where each deliberate allocation's address goes, so that the allocation has an observable
/// effect and cannot be optimised away.
private let deliberateSink = Atomic<Int>(0)

/// Makes exactly one heap allocation (`malloc`, through `swift_slowAlloc`) and frees it.
/// Opaque to the optimiser: never inlined, never optimised, its address published.
@inline(never)
@_optimize(none)
func allocateOnPurpose() {
    let block = UnsafeMutableRawPointer.allocate(byteCount: 48, alignment: 16)
    deliberateSink.store(Int(bitPattern: block), ordering: .relaxed)
    block.deallocate()
}

/// The counter's lower bound: it must see a known number of deliberate allocations exactly,
/// and attribute them to the thread that made them. Without the interposer preloaded it sees
/// none, and every measurement after it would pass whatever the loop did: so this fails first.
///
/// `idleThread` is a thread that allocates nothing meanwhile (the main thread, waiting for
/// this one). Returns whether the counter can be trusted.
func counterCountsExactly(idleThread: pthread_t) -> Bool {
    let deliberate = 1_000
    var trusted = true
    let here = allocations { for _ in 0..<deliberate { allocateOnPurpose() } }
    if here.total != deliberate || here.onThread != deliberate {
        fail(
            "the allocation counter saw \(here.total) (\(here.onThread) on this thread) of \(deliberate) deliberate allocations, not exactly \(deliberate): the malloc interposer is not in effect (libMallocInterposerSwift.so must provide malloc ahead of libc: the fixture links it, and scripts/test preloads it too)"
        )
        trusted = false
    }
    // Attributed to another thread, the same allocations count in the total only.
    let elsewhere = allocations(attributedTo: idleThread) { for _ in 0..<deliberate { allocateOnPurpose() } }
    if elsewhere.total != deliberate || elsewhere.onThread != 0 {
        fail(
            "the allocation counter attributed \(elsewhere.onThread) of \(elsewhere.total) deliberate allocations to an idle thread (expected 0 of \(deliberate))"
        )
        trusted = false
    }
    let nothing = allocations {}
    if nothing.total != 0 {
        fail("the allocation counter counted \(nothing.total) allocations around an empty body (expected 0)")
        trusted = false
    }
    report(
        "counter: \(here.total) of \(deliberate) deliberate allocations counted, \(here.onThread) on their thread, \(elsewhere.onThread) on an idle one"
    )
    return trusted
}
