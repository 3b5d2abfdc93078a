"""``castell learn``'s lessons: their positions (:mod:`client.learn.positions`) and the
lessons themselves, as data (:mod:`client.learn.lessons`). Pure: no I/O, no screen."""
