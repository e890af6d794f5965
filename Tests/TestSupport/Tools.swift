import Foundation
import Testing

/// Runs a helper program (mount, openssl, ...) and returns its status and
/// output; nil when it cannot be started.
@discardableResult
public func runTool(_ path: String, _ args: [String]) -> (status: Int32, output: String)? {
    guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    guard (try? p.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The first of `names` found on the usual PATH directories.
public func findTool(_ names: String...) -> String? {
    let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        + ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    for name in names {
        for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
    }
    return nil
}

/// The lowercase hex digest of `text`'s UTF-8 bytes by a coreutils tool
/// (`sha256sum`, `sha1sum`, `md5sum`): an implementation independent of the
/// one imgwarm uses, for checking cache file names. Fed through a file, so
/// no shell quoting is involved. Nil when the tool cannot be run.
public func coreutilsDigest(_ tool: String, of text: String) -> String? {
    guard let path = findTool(tool) else { return nil }
    let file = NSTemporaryDirectory() + "imgwarm-digest-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
    guard FileManager.default.createFile(atPath: file, contents: Data(text.utf8)) else { return nil }
    defer { try? FileManager.default.removeItem(atPath: file) }
    guard let result = runTool(path, [file]), result.status == 0 else { return nil }
    return String(result.output.prefix { $0 != " " })
}

/// Whether this is a CI run (env `CI=true`, as `.ci/run` and CI services
/// set it): there a missing tool fails the test that needs it.
public var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

/// A tool a test needs. Found: its path. Missing: under CI the current test
/// fails (a check that needs the tool must not pass by not running); on a
/// developer machine a visible note says what did not run, and the caller
/// skips that check.
public func neededTool(_ names: String..., for purpose: String,
                       sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    for name in names {
        if let path = findTool(name) { return path }
    }
    let what = "\(names.joined(separator: " or ")) not found: \(purpose) did not run"
    if isCI {
        Issue.record(Comment(rawValue: what + " (CI=true: scripts/setup.sh installs it)"), sourceLocation: sourceLocation)
    } else {
        print("note: skipped: \(what) (install it, or run scripts/setup.sh)")
    }
    return nil
}

/// For `.enabled(if:)`: a test whose prerequisite is missing runs anyway
/// under CI, where its own `#require` then fails it; elsewhere it is
/// skipped, and Swift Testing prints the trait's comment as the reason.
public func runsOrFailsUnderCI(_ available: Bool) -> Bool { available || isCI }
