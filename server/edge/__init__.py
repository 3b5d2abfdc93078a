"""The protocol edge: who may connect (admission), one frame to one reply (dispatch and its
error boundary), what each connection state takes (the allow-list), and the handlers of the
requests, by area."""
