/// How a `warm` run's cores are shared between the download engine's
/// threads and the workers after it. Pure.
///
/// Validating, decoding is the heaviest stage: the engine may take a
/// thread per core (`LoopSplit`) and the decoders a worker per core, and
/// the kernel shares the cores as the work shifts between them.
///
/// Without decoding (`--no-validate`) a file is the engine's work (curl,
/// the sockets) and one file write. Engine threads writing their own files
/// keep every core busy from the engine alone, and each request sent then
/// wakes the server (on the same machine in the benchmarks) onto a busy
/// core: on 2 cores, 11,000-17,000 task switches for 20,000 thumbnails
/// against curl's 40, and 1.16x curl's CPU. One engine thread handing each
/// file to one store worker does the same work at 1.02x curl's CPU in the
/// same wall time (7 alternated rounds; docs/performance.md). So the
/// engine gets half the cores, rounded up, and the store workers the rest.
/// Measured on 2 cores only; on more the halves are a guess.
public struct RunThreads: Equatable, Sendable {
    /// The cores the engine's automatic thread count is taken from
    /// (`DownloaderConfiguration.cores`).
    public let engineCores: Int
    /// Worker threads after the engine: decoders, or the store writers.
    public let workers: Int
    /// Whether an entry that only needs its write (no decoding, no
    /// `--budget` ticket) is stored on the engine thread that completed it:
    /// when the engine's threads alone fill the cores, a hand-off would only
    /// add a wakeup.
    public let storesOnEngine: Bool

    /// `requestedLoops`: the user's `--download-threads`, nil for automatic.
    public init(cores: Int, decode: Bool, requestedLoops: Int?) {
        let cores = max(1, cores)
        if decode {
            engineCores = cores
            workers = cores
            storesOnEngine = false
        } else if let requested = requestedLoops {
            engineCores = cores
            storesOnEngine = requested >= cores
            workers = max(1, cores - requested)
        } else if cores == 1 {
            engineCores = 1
            workers = 1
            storesOnEngine = true
        } else {
            workers = cores / 2
            engineCores = cores - workers
            storesOnEngine = false
        }
    }
}
