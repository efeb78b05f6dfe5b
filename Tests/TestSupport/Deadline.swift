/// How long a test or scenario waits for an event before it fails: generous, because a thread
/// on a loaded two-core machine can be descheduled for a long while, and because an async test
/// waits for Swift's cooperative pool too. That pool has one thread per core (two here), and
/// Swift Testing runs the synchronous tests on it, in parallel: the stress suites hold both
/// threads for up to two minutes of a run, and a task an async test started (a submit, a
/// sequence's consumer, a service group) gets no thread until one of them ends. Such a task is
/// late, not lost, so the deadline outlasts the longest synchronous test.
public let generousDeadline: Duration = .seconds(300)
