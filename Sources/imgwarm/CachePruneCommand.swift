import ArgumentParser
import Foundation
import ImgWarmKit
#if canImport(Glibc)
import Glibc
#endif

extension CacheExpireType: ExpressibleByArgument {}

struct CachePruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Expire and trim the cache with its library's semantics.",
        discussion: """
        sdwebimage: expiry removes every file whose date is at or before now - max-age (files \
        without that date stay). Then, if the allocated size of what remains is above \
        max-size, files go oldest first until it is below trim-ratio x max-size. \
        kingfisher: expiry removes every file whose deadline (modification date) is at or \
        before now; then, if the total length is at or above max-size, files go by oldest \
        creation date (Kingfisher's last access) until it is at or below half of max-size. \
        nuke: if the allocated size is above max-size [150MiB], files go least recently \
        accessed first until it is at or below trim-ratio [0.7] x max-size. \
        glide, coil, coil2, okhttp: while the entries' total length is above max-size [glide: \
        250MiB; coil, coil2: 250MiB, the most Coil sizes itself to; okhttp: 10MiB, React \
        Native's], the least recently used \
        entry in journal order goes (REMOVE line), then the journal is rebuilt when \
        DiskLruCache would. flutter: rows beyond the max-objects [200] most recently \
        touched among those touched over a day ago, then rows touched before now - max-age \
        [30d], go with their files, and files no row names. \
        Hidden files and folders (imgwarm's .imgwarm state among them) are never \
        touched nor counted. Entries of --keep manifests are never removed but count \
        in the size. Example (cron): imgwarm cache prune --max-age 30d --max-size 20G
        """
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Option(help: ArgumentHelp("Remove files whose date is at or before now minus this (e.g. 30d, 12h). sdwebimage; flutter (rows by touched) [30d].", valueName: "duration"),
            transform: { try Parse.duration($0) })
    var maxAge: Double?

    @Option(help: ArgumentHelp("Then trim while the size is above this (e.g. 20G, 500MiB; 0: no limit). [nuke: 150MiB; glide, coil, coil2: 250MiB; okhttp: 10MiB]", valueName: "size"),
            transform: { try Parse.size($0) })
    var maxSize: UInt64?

    @Option(help: ArgumentHelp("Which file date expiry and trimming use: access, modification, creation (birth time) or change. sdwebimage only. [default: access]", valueName: "type"))
    var expireType: CacheExpireType?

    @Option(help: ArgumentHelp("Trim down to this fraction of --max-size (0 < R <= 1). sdwebimage [0.5] and nuke [0.7].", valueName: "ratio"))
    var trimRatio: Double?

    @Option(help: ArgumentHelp("Keep at most this many objects (flutter's maxNrOfCacheObjects). flutter only. [200]", valueName: "count"))
    var maxObjects: Int?

    @Option(name: .customLong("keep"), help: ArgumentHelp("Never remove the entries of this manifest (repeatable; - for stdin).", valueName: "manifest"), completion: .file())
    var keep: [String] = []

    @Flag(help: "Remove nothing; list what would be removed and why.")
    var dryRun = false

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(help: "Prune a folder that is not recognisably a cache of the layout (see cache clear --force).")
    var force = false

    func options(layout: any CacheLayout) -> PruneOptions {
        var options = PruneOptions(layout: layout, maxAge: maxAge, maxSize: maxSize ?? (try? cacheOptions.presetSizeLimit()) ?? nil, expireType: expireType,
                                   trimRatio: trimRatio, dryRun: dryRun)
        options.maxObjects = maxObjects
        return options
    }

    func run() throws {
        let cache = try cacheOptions.inspectedCache(missing: .fails)
        if !dryRun { try cacheOptions.requireRecognised(cache, force: force, purpose: .delete) }
        if keep.filter({ $0 == "-" }).count > 1 { throw ImgWarmError.usage("--keep - (standard input) can be given once") }
        var options = self.options(layout: cache.layout)
        options.pinned = try loadPinned(layout: cache.layout)
        let result = try CachePrune.run(cache, options: options)
        let out = OutputLines()
        if json {
            PruneReport.json(result, includeFiles: dryRun) { out.write($0) }
        } else {
            if dryRun { PruneReport.listing(result) { out.write($0) } }
            out.write(PruneReport.summary(result))
        }
        out.flush()
        for warning in PruneReport.warnings(result) { printError(warning) }
        if let failure = result.firstFailure {
            let more = result.failed > 1 ? " (and \(result.failed - 1) more \(result.failed == 2 ? "file" : "files"))" : ""
            throw ImgWarmError.cache(path: "\(cache.directory)/\(failure.path ?? "")", reason: "\(failure.detail)\(more)", errno: failure.errno)
        }
    }

    /// The names of the --keep manifests. A manifest that cannot be read is a
    /// usage error: pruning without the pins the user asked for could remove
    /// what they meant to keep.
    private func loadPinned(layout: any CacheLayout) throws -> PinnedNames {
        guard !keep.isEmpty else { return PinnedNames() }
        var problems = 0
        // A manifest that cannot be read: an ImgWarmError naming it (exit 2).
        let pinned = try PinnedNames.load(manifests: keep, layout: layout) { problem in
            problems += 1
            if problems <= 5 { printError("\(problem.description) (pins nothing)") }
        }
        if problems > 5 { printError("\(problems - 5) more manifest lines pin nothing") }
        return pinned
    }
}

/// Buffered stdout for long listings: one write(2) per 64 KiB.
final class OutputLines {
    private var buffer: [UInt8] = []

    func write(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                break  // a closed pipe (| head): nothing more to say
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
