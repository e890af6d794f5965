import ImgWarmCache
// In Warm, not in Cache: the keys come from manifests, which Warm reads.
extension PinnedNames {
    /// Reads the keys of manifests (`-` for standard input). Lines the
    /// manifest reader rejects pin nothing and go to `problem`; a manifest
    /// that cannot be opened throws.
    public static func load(manifests: [String], layout: any CacheLayout = SDWebImageLayout(),
                            problem: (Problem) -> Void) throws -> PinnedNames {
        // Hashed as read: a manifest of millions of lines never becomes
        // millions of Strings.
        var hashes: [UInt64] = []
        let reader = ManifestReader()
        for (index, path) in manifests.enumerated() {
            try reader.read(path: path, fileIndex: index, entry: { entry in
                for name in layout.entryName(forKey: entry.key).lookupNames { hashes.append(hash(name: name)) }
            }, problem: { p in
                problem(Problem(path: path, line: p.source.line, reason: p.reason))
            })
        }
        return PinnedNames(hashes: hashes)
    }
}
