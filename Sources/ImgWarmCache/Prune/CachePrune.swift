/// `cache prune`, one path for every layout: the session (folders checked,
/// the lock shared with warms; a cache no imgwarm run has used gets no
/// lock file, and a dry run touches nothing), then the layout's backend
/// prunes as its library does (`CacheBackend.prune`: a plain folder's
/// expiry and size sweep, a journal's or a database's eviction), relative
/// to the folder the session opened. Throws `ImgWarmError` (usage) for an
/// option the library has no notion of (a usage error), `ImgWarmError` for
/// a folder that cannot be pruned (exit status 3).
public enum CachePrune {
    public static func run(_ cache: DiskCache, options: PruneOptions) throws -> PruneResult {
        var options = options
        options.layout = cache.layout
        let session = try CacheSession(cache, for: options.dryRun ? .pruneDryRun : .prune)
        defer { withExtendedLifetime(session) {} }
        return try cache.backend.prune(options)
    }
}
