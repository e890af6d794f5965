/// How many entries `warm` keeps between the feeder and the end of the
/// store stage (`depth`), and how many of them must finish before a
/// sleeping feeder is woken (`wakeBatch`). Pure.
///
/// The depth bounds memory: enough to keep every transfer slot busy while
/// bodies wait for a decoder, few enough that bodies in memory stay within
/// about 2 x concurrency x `--max-bytes`. With `-j auto` it is the ceiling
/// (`--max-concurrency`) and a margin: twice 256 held up to 512 bodies for
/// nothing where the limit stays low.
///
/// The wake batch keeps the engine fed: while the feeder sleeps, `depth -
/// wakeBatch` entries are still outstanding, and that must not fall below
/// the transfers allowed in flight, or the engine runs dry until the
/// feeder wakes. Half the depth (one wakeup per half of the pipeline)
/// leaves `concurrency` outstanding with a fixed `-j`; with `-j auto` the
/// margin is smaller than half, and a half-depth batch let a far origin's
/// 256 transfers fall to 145 between wakeups (a quarter of the request
/// rate lost).
public struct FeedWindow: Equatable, Sendable {
    public let depth: Int
    public let wakeBatch: Int

    public init(adaptive: Bool, concurrency: Int, validationWorkers: Int) {
        let c = max(1, concurrency)
        let depth = (adaptive ? c + 32 : 2 * c) + max(0, validationWorkers)
        self.depth = depth
        wakeBatch = max(1, min(depth / 2, depth - c))
    }
}
