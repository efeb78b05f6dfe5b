/// How long a test or scenario waits for an event before it fails: generous, because a thread
/// on a loaded two-core machine can be descheduled for a long while.
public let generousDeadline: Duration = .seconds(30)
