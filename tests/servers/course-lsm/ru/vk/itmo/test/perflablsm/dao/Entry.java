package ru.vk.itmo.test.perflablsm.dao;

/** The student's own copy of the course's entry: a key and its value (null: deleted). */
public interface Entry<D> {
    D key();

    D value();
}
