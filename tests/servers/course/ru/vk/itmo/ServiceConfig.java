package ru.vk.itmo;

import java.nio.file.Path;
import java.util.List;

/**
 * Stand-in for the course's service configuration: the same constructor and accessors
 * (selfPort(), selfUrl(), clusterUrls(), workingDir()), here as a record.
 */
public record ServiceConfig(int selfPort, String selfUrl, List<String> clusterUrls, Path workingDir) {
}
