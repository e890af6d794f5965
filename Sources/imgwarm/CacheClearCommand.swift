import ArgumentParser
import Foundation
import ImgWarmKit

struct CacheClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove every cache entry (and imgwarm's state too with --all).",
        discussion: "Hidden files and folders other than imgwarm's own state are left alone, as SDWebImage leaves them. "
            + "Exit status 3 when --all could not remove the state folder (the entries are removed all the same)."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(help: "Also remove imgwarm's state folder (.imgwarm: failed-URL list, validators).")
    var all = false

    @Flag(help: "Remove nothing; list the files that would be removed.")
    var dryRun = false

    @Flag(help: "Clear a folder that is not recognisably a cache of the layout (no .imgwarm, no index, files the layout does not name so). Never /, a home folder, a system folder or a folder holding .git.")
    var force = false

    func run() throws {
        let cache = try cacheOptions.inspectedCache(missing: .fails)
        if dryRun {
            try cache.openExisting()
            let out = OutputLines()
            let result = try CacheMaintenance.clear(cache, includingState: false) { path, size in
                // A name in a shared folder is anyone's text: escaped.
                out.write("\(TerminalText.escaped(path)) (\(size) bytes)")
            }
            out.write("would remove \(result.files) files, \(Units.formatBytes(result.bytes))")
            out.flush()
            if let skipped = result.skipped { printError(skipped) }
            return
        }
        try cacheOptions.requireRecognised(cache, force: force, purpose: .delete)
        // Opened and checked before anything is removed: a symbolic link
        // at the cache folder or at `.imgwarm`, or a `.imgwarm` another
        // user may change, is exit 3 with nothing deleted.
        try cache.openExisting()
        var lock: CacheLock?
        if all, cache.stateFolder != nil {
            lock = try CacheLock(cache: cache, mode: .exclusive)
        }
        defer { withExtendedLifetime(lock) {} }
        let result = try CacheMaintenance.clear(cache, includingState: all)
        print("removed \(result.files) \(result.files == 1 ? "file" : "files"), \(Units.formatBytes(result.bytes))")
        if let skipped = result.skipped { printError(skipped) }
        // The entries are gone; the state was asked to go too and is not.
        if let kept = result.stateNotRemoved { throw kept }
    }
}
