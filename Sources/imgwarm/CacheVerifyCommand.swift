import ArgumentParser
import Foundation
import ImgWarmKit

struct CacheVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Decode every cache entry; list broken entries and stray temp files.",
        discussion: """
        Broken: empty, truncated, not an image, or undecodable (formats are checked as \
        docs/validation.md lists). Stray temp files are leftovers of killed runs \
        under .imgwarm/tmp. Each is printed as `PATH: reason`. A symbolic link, FIFO, \
        socket or device at an entry's name is broken too (`PATH: symbolic link, not a \
        regular file (never followed)`); --delete removes the link, never its target. \
        Files of an unknown binary \
        format are listed as `PATH: unknown format (...), kept` and kept, as an app may \
        still show them (broken under --strict-formats). Files whose decoder library \
        (AVIF, HEIF, JPEG XL) cannot be opened here are listed as `PATH: not checked: \
        no decoder, kept; REASON` and never deleted; so are images whose decoding \
        would need more than the whole --decode-memory (`not checked: over \
        --decode-memory, kept`) or more CPU time than --decode-timeout (`not \
        checked: over --decode-timeout, kept`), and files it cannot open or read \
        (`not checked: unreadable, kept`). Exit status 1 when anything \
        broken, stray or not checked was found, also with --delete after removing it; \
        0 when the cache is clean.
        """
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(help: "Remove the broken entries and stray temp files found.")
    var delete = false

    @Flag(help: "With --delete: delete in a folder that is not recognisably a cache of the layout (see cache clear --force).")
    var force = false

    @Flag(help: "Print JSON: {checked, broken: [{path, reason}], unknown: [{path, signature}], unchecked: [{path, reason}] (when a decoder is missing), stray_temp_files, deleted}.")
    var json = false

    @Option(name: .customLong("max-pixels"), help: "Largest accepted width x height, as for warm.")
    var maxPixels: UInt64 = 100_000_000

    @Flag(name: .customLong("strict-formats"), help: "Count formats not decoded here (and unknown ones) as broken, as warm --strict-formats refuses them.")
    var strictFormats = false

    @Option(name: .customLong("decode-memory"), help: ArgumentHelp("Memory all decoders may hold at once, as for warm. [default: a quarter of the cgroup's memory limit or of RAM, at most 1GiB]", valueName: "size"), transform: Parse.size)
    var decodeMemory: UInt64?

    @Option(name: .customLong("decode-timeout"), help: ArgumentHelp("CPU time one image's decoder may take, as for warm. [default: 10s]", valueName: "duration"), transform: Parse.duration)
    var decodeTimeout: Double = ValidationOptions.defaultDecodeTimeout

    func validate() throws {
        if decodeMemory == 0 { throw ValidationError("--decode-memory must be at least 1 byte") }
        if !(decodeTimeout > 0) { throw ValidationError("--decode-timeout must be positive") }
    }

    func run() throws {
        ErrorOutput.divertLibraryOutput(verbose: false)
        BufferAllocator.tuneForBulkBuffers()
        let cache = try cacheOptions.inspectedCache(missing: .fails)
        if delete { try cacheOptions.requireRecognised(cache, force: force, purpose: .delete) }
        var options = ValidationOptions()
        options.maxPixels = maxPixels
        options.strictFormats = strictFormats
        options.decodeMemory = DecodeMemoryGate(limit: decodeMemory ?? DecodeMemoryDefault.current())
        options.decodeTimeout = decodeTimeout
        let report = try CacheVerifier(options: options).verify(cache, delete: delete)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            // File names are anyone's who can write the folder: escaped.
            for entry in report.broken { print(TerminalText.escaped("\(entry.path): \(entry.reason)")) }
            for entry in report.unknown { print(TerminalText.escaped("\(entry.path): unknown format (\(entry.signature)), kept")) }
            for entry in report.unchecked {
                print(TerminalText.escaped("\(entry.path): not checked: \(Self.uncheckedWhy(entry)), kept; \(entry.reason)"))
            }
            for path in report.strayTempFiles { print(TerminalText.escaped("\(path): stray temp file")) }
            print(Self.summary(report))
        }
        for error in report.deleteErrors { printError("cannot remove \(error)") }
        if let skipped = report.skipped { printError(skipped) }
        if !report.isClean { throw ExitCode(ExitStatus.entriesFailed) }
    }

    /// Why an entry was not checked, as its line and the summary say it.
    static func uncheckedWhy(_ entry: BrokenCacheEntry) -> String {
        switch entry.error {
        case nil: return "no decoder"
        case EntryError.tooComplex.name: return "over --decode-timeout"
        case EntryError.disk.name: return "unreadable"
        default: return "over --decode-memory"
        }
    }

    /// `1 not checked (no decoder), 2 not checked (over --decode-memory), `
    static func uncheckedCounts(_ r: CacheVerifyReport) -> String {
        var counts: [String: Int] = [:]
        for entry in r.unchecked { counts[uncheckedWhy(entry), default: 0] += 1 }
        return ["no decoder", "over --decode-memory", "over --decode-timeout", "unreadable"].map { why in
            counts[why].map { "\($0) not checked (\(why)), " } ?? ""
        }.joined()
    }

    static func summary(_ r: CacheVerifyReport) -> String {
        var line = "checked \(r.checked) \(r.checked == 1 ? "file" : "files"): \(r.broken.count) broken, "
            + (r.unknown.isEmpty ? "" : "\(r.unknown.count) of unknown format (kept), ")
            + uncheckedCounts(r)
            + "\(r.strayTempFiles.count) stray temp \(r.strayTempFiles.count == 1 ? "file" : "files")"
        // Unchecked files are never removed.
        if r.deleted && !(r.broken.isEmpty && r.strayTempFiles.isEmpty) {
            line += r.deleteErrors.isEmpty ? ", removed" : ", removed except \(r.deleteErrors.count)"
        }
        return line
    }
}
