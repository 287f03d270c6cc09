package perflab.spec;

import java.util.ArrayList;
import java.util.List;

/** The server's --help, generated from {@link OptionList}. */
public final class HelpText {
    private static final int WIDTH = 110;
    private static final int HELP_COLUMN = 34;

    private HelpText() {
    }

    public static String render() {
        StringBuilder sb = new StringBuilder();
        sb.append("usage: java -cp 'lib/*' perflab.server.Main [--key value | --key=value]...\n")
                .append("       java -cp 'lib/*' perflab.server.Main --help | --options-json\n")
                .append("Sizes take k, m, g (binary); durations ms or s (a bare number is ms). --options-json prints\n")
                .append("every option, /v0/stats metric and stdout event as JSON.\n");
        section(sb, OptionScope.SERVER, "\nserver options:\n");
        section(sb, OptionScope.STORAGE, "\nstorage options (also StorageFactory.open and Prefill keys):\n");
        return sb.toString();
    }

    private static void section(StringBuilder sb, OptionScope scope, String title) {
        sb.append(title);
        for (OptionSpec o : OptionList.inScope(scope)) {
            String flag = "  --" + o.key + " " + o.metavar();
            StringBuilder text = new StringBuilder(o.help).append(" (default ").append(o.defaultText);
            if (o.boundsText() != null) {
                text.append("; ").append(o.boundsText());
            }
            text.append(')');
            List<String> lines = wrap(text.toString(), WIDTH - HELP_COLUMN);
            if (flag.length() + 1 > HELP_COLUMN) {
                sb.append(flag).append('\n');
                sb.append(pad("", HELP_COLUMN));
            } else {
                sb.append(pad(flag, HELP_COLUMN));
            }
            sb.append(lines.get(0)).append('\n');
            for (int i = 1; i < lines.size(); i++) {
                sb.append(pad("", HELP_COLUMN)).append(lines.get(i)).append('\n');
            }
        }
    }

    private static List<String> wrap(String text, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.split(" ")) {
            if (line.length() > 0 && line.length() + 1 + word.length() > width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            if (line.length() > 0) {
                line.append(' ');
            }
            line.append(word);
        }
        lines.add(line.toString());
        return lines;
    }

    private static String pad(String s, int width) {
        StringBuilder sb = new StringBuilder(s);
        while (sb.length() < width) {
            sb.append(' ');
        }
        return sb.toString();
    }
}
