package rialto.interop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The hypervisor's steal time on this machine (the {@code steal} column of {@code /proc/stat}'s
 * {@code cpu} line, all CPUs together), so a wait that timed out can say whether the host took
 * the CPUs away meanwhile: on the shared benchmark VM a run once lost seconds to it.
 *
 * <p>Never: fails. Where {@code /proc/stat} cannot be read (not Linux) it reports nothing.
 */
final class HostSteal {
    private HostSteal() {}

    /** USER_HZ: the unit of {@code /proc/stat} (100 on every Linux build we run on). */
    private static final long MILLIS_PER_TICK = 10;

    /** Steal time so far in milliseconds, or -1 if unknown. */
    static long millis() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
                if (line.startsWith("cpu ")) {
                    return parse(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unknown
        }
        return -1;
    }

    /** The steal column (the 8th number) of a {@code /proc/stat} cpu line in ms, -1 if absent. */
    static long parse(String cpuLine) {
        String[] f = cpuLine.trim().split("\\s+");
        if (f.length < 9) {
            return -1;
        }
        try {
            return Long.parseLong(f[8]) * MILLIS_PER_TICK;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** "; host steal during the wait: N ms" since a {@link #millis()} reading, or "" if unknown. */
    static String during(long atStart) {
        long now = millis();
        if (atStart < 0 || now < 0) {
            return "";
        }
        return "; host steal during the wait: " + (now - atStart) + " ms (all CPUs)";
    }
}
