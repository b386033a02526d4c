;; Ferry (nextstate shipped domain).
;;
;; A ferry with room for one car sails between locations; cars board and
;; debark where the ferry is.  Distinct locations are given by the static
;; predicate not-eq.  Problems name the domain `ferry`.
;; Types, predicates and actions follow the ACPBench reference order.

(define (domain ferry)
  (:requirements :strips :typing)

  (:types car location - object)

  (:predicates
    (at ?c - car ?l - location) ; car ?c waits at ?l
    (at-ferry ?l - location)    ; the ferry is at ?l
    (empty-ferry)               ; no car is on board
    (not-eq ?x ?y)              ; static: ?x and ?y are different locations
    (on ?c - car))              ; car ?c is on board

  ;; Drive the car ?car from the quay at ?loc onto the (empty) ferry.
  (:action board
    :parameters (?car - car ?loc - location)
    :precondition (and (at ?car ?loc) (at-ferry ?loc) (empty-ferry))
    :effect (and (on ?car) (not (at ?car ?loc)) (not (empty-ferry))))

  ;; Drive the car ?car off the ferry at ?loc.
  (:action debark
    :parameters (?car - car ?loc - location)
    :precondition (and (on ?car) (at-ferry ?loc))
    :effect (and (at ?car ?loc) (empty-ferry) (not (on ?car))))

  (:action sail
    :parameters (?from - location ?to - location)
    :precondition (and (not-eq ?from ?to) (at-ferry ?from))
    :effect (and (at-ferry ?to) (not (at-ferry ?from))))
)
