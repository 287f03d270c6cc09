package ru.vk.itmo.test.perflablsm.dao;

public record BaseEntry<D>(D key, D value) implements Entry<D> {
}
