package ru.vk.itmo.dao;

/** Stand-in for the course's storage entry: a key and its value (null: the key is deleted). */
public interface Entry<D> {
    D key();

    D value();
}
