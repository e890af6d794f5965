// Measures ImageValidator throughput: validate-bench SECONDS FILE...
// Groups the files by sniffed format and, for each group, validates the
// whole group over and over for about SECONDS on one thread, then prints
// one line per group: images/s and MB/s (10^6 bytes), and the process's CPU
// time per image (the codecs' own threads included), which a machine shared
// with other work does not inflate the way it does wall time.
import Foundation
import ImgWarmKit

let args = CommandLine.arguments.dropFirst()
guard let seconds = args.first.flatMap(Double.init), args.count > 1 else {
    FileHandle.standardError.write(Data("usage: validate-bench SECONDS FILE...\n".utf8))
    exit(2)
}

var groups: [String: [[UInt8]]] = [:]
for path in args.dropFirst() {
    guard let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("validate-bench: cannot read \(path)\n".utf8))
        exit(2)
    }
    let bytes = [UInt8](data)
    let label = (path as NSString).lastPathComponent.components(separatedBy: "-").first ?? "?"
    groups[label, default: []].append(bytes)
}

let options = ValidationOptions()
for label in groups.keys.sorted() {
    let images = groups[label]!
    // Every image must pass, or the figure would time the error path.
    for image in images {
        if case .failure(let f) = ImageValidator.validate(image, options: options) {
            print("\(label): a bench image fails validation: \(f.reason)")
            exit(1)
        }
    }
    let groupBytes = images.reduce(0) { $0 + $1.count }
    var count = 0, bytes = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let cpuStart = processCPUSeconds()
    var elapsed = 0.0
    repeat {
        for image in images {
            _ = ImageValidator.validate(image, options: options)
        }
        count += images.count
        bytes += groupBytes
        elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    } while elapsed < seconds
    let cpuPerImage = (processCPUSeconds() - cpuStart) / Double(count)
    let avgKB = Double(groupBytes) / Double(images.count) / 1000
    let figures = String(format: "%2d files, avg %6.1f KB: %8.1f images/s %7.1f MB/s %9.1f CPU-us/image",
                         images.count, avgKB, Double(count) / elapsed, Double(bytes) / elapsed / 1e6, cpuPerImage * 1e6)
    print(label.padding(toLength: 24, withPad: " ", startingAt: 0) + figures)
}

/// CPU time of the process, all threads (CLOCK_PROCESS_CPUTIME_ID).
func processCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
