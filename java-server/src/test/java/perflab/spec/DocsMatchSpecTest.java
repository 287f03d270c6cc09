package perflab.spec;

import org.junit.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * docs/contracts/server.md section 2 (flags, events) and section 3 (metrics) carry exactly the spec's tables:
 * the spec classes are the one description, the document shows it. After a spec change, run
 * {@code DocTables.main} and paste.
 */
public class DocsMatchSpecTest {
    private static List<String> section(String number) throws Exception {
        Path doc = Paths.get("..", "docs", "contracts", "server.md"); // Gradle runs tests in java-server/
        List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        int start = -1;
        int end = lines.size();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("## " + number + ". ")) {
                start = i;
            } else if (start >= 0 && lines.get(i).startsWith("## ")) {
                end = i;
                break;
            }
        }
        assertTrue("no section " + number + " in " + doc.toAbsolutePath(), start >= 0);
        return lines.subList(start, end);
    }

    /** The table that starts with {@code header}: the header and the following table rows. */
    private static List<String> table(List<String> section, String header) {
        int at = section.indexOf(header);
        assertTrue("no table headed '" + header + "'", at >= 0);
        List<String> rows = new ArrayList<>();
        for (int i = at; i < section.size() && section.get(i).startsWith("|"); i++) {
            rows.add(section.get(i));
        }
        return rows;
    }

    private static void assertTable(List<String> expected, List<String> actual) {
        assertEquals("the docs table differs from the spec; expected:\n" + String.join("\n", expected) + "\n",
                String.join("\n", expected), String.join("\n", actual));
    }

    @Test
    public void section2FlagTableIsTheOptionList() throws Exception {
        assertTable(DocTables.flags(), table(section("2"), DocTables.FLAGS_HEADER));
    }

    @Test
    public void section2EventTableIsTheEventList() throws Exception {
        assertTable(DocTables.events(), table(section("2"), DocTables.EVENTS_HEADER));
    }

    @Test
    public void section3MetricTableIsTheMetricList() throws Exception {
        assertTable(DocTables.metrics(), table(section("3"), DocTables.METRICS_HEADER));
    }

    @Test
    public void theFlagTableListsEachKeyOnceWithItsDefaultText() {
        List<String> rows = DocTables.flags();
        assertEquals(OptionList.ALL.size() + 2, rows.size());
        for (OptionSpec o : OptionList.ALL) {
            long n = rows.stream().filter(r -> r.startsWith("| `--" + o.key + "` | `" + o.defaultText + "` |")).count();
            assertEquals(o.key, 1, n);
        }
        assertEquals(Arrays.asList("lsm", "memory", "rocksdb"), OptionList.BACKEND.choices);
    }
}
