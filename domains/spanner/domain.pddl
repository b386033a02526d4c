;; Spanner (nextstate shipped domain; the IPC 2011 / 2023 Learning Track domain).
;;
;; A man walks a one-way chain of locations from the shed to the gate,
;; picking up spanners on the way; at the gate each loose nut is tightened
;; with a usable spanner, which it wears out.  A spanner left behind cannot
;; be fetched again.  Problems name the domain `spanner`.

(define (domain spanner)
  (:requirements :strips :typing)

  (:types location locatable - object
          man nut spanner - locatable)

  (:predicates
    (at ?m - locatable ?l - location)          ; ?m is at ?l
    (carrying ?m - man ?s - spanner)           ; the man holds spanner ?s
    (usable ?s - spanner)                      ; ?s has not tightened a nut yet
    (link ?l1 - location ?l2 - location)       ; static: one step from ?l1 to ?l2
    (tightened ?n - nut)
    (loose ?n - nut))

  ;; Step along a link.
  (:action walk
    :parameters (?start - location ?end - location ?m - man)
    :precondition (and (at ?m ?start) (link ?start ?end))
    :effect (and (not (at ?m ?start)) (at ?m ?end)))

  ;; Take a spanner lying where the man stands.
  (:action pickup_spanner
    :parameters (?l - location ?s - spanner ?m - man)
    :precondition (and (at ?m ?l) (at ?s ?l))
    :effect (and (not (at ?s ?l)) (carrying ?m ?s)))

  ;; Tighten a loose nut where the man stands with a carried usable spanner.
  (:action tighten_nut
    :parameters (?l - location ?s - spanner ?m - man ?n - nut)
    :precondition (and (at ?m ?l) (at ?n ?l) (carrying ?m ?s) (usable ?s) (loose ?n))
    :effect (and (not (loose ?n)) (not (usable ?s)) (tightened ?n))))
