package ru.vk.itmo.test.perflabstudent.dao;

import ru.vk.itmo.dao.Entry;

/** A key and its value; a null value marks a deletion. */
public record StudentEntry(byte[] key, byte[] value) implements Entry<byte[]> {
}
