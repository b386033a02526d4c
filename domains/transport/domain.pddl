;; Transport (nextstate shipped domain; the IPC 2008 domain without action
;; costs, as the IPC 2023 Learning Track has it).
;;
;; Vehicles drive along roads and carry packages; a vehicle's free room is a
;; size object, one step down the capacity-predecessor chain per package it
;; holds.  Problems name the domain `transport`.

(define (domain transport)
  (:requirements :typing)

  (:types size location locatable - object
          vehicle package - locatable)

  (:predicates
    (road ?l1 ?l2 - location)                  ; static
    (at ?x - locatable ?v - location)
    (in ?x - package ?v - vehicle)
    (capacity ?v - vehicle ?s1 - size)         ; ?v has room ?s1
    (capacity-predecessor ?s1 ?s2 - size))     ; static: ?s2 is one more than ?s1

  ;; Drive along a road.
  (:action drive
    :parameters (?v - vehicle ?l1 ?l2 - location)
    :precondition (and (at ?v ?l1) (road ?l1 ?l2))
    :effect (and (not (at ?v ?l1)) (at ?v ?l2)))

  ;; Load a package where the vehicle is; its room goes down one.
  (:action pick-up
    :parameters (?v - vehicle ?l - location ?p - package ?s1 ?s2 - size)
    :precondition (and (at ?v ?l) (at ?p ?l) (capacity-predecessor ?s1 ?s2) (capacity ?v ?s2))
    :effect (and (not (at ?p ?l)) (in ?p ?v) (capacity ?v ?s1) (not (capacity ?v ?s2))))

  ;; Unload a package; the vehicle's room goes up one.
  (:action drop
    :parameters (?v - vehicle ?l - location ?p - package ?s1 ?s2 - size)
    :precondition (and (at ?v ?l) (in ?p ?v) (capacity-predecessor ?s1 ?s2) (capacity ?v ?s1))
    :effect (and (not (in ?p ?v)) (at ?p ?l) (capacity ?v ?s2) (not (capacity ?v ?s1)))))
