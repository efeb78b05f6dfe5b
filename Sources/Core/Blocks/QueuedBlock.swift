/// A block in the ``BlockQueue``, or taken from it by a drain, with its place in queue order.
struct QueuedBlock {
    /// Increasing in queue order; a drain's limit is a sequence number.
    let sequence: UInt64
    let block: PendingBlock
}
